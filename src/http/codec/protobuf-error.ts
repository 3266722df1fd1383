/** A protobuf request body that cannot be decoded: its own file, shared by protobuf.ts and the decoder it loads. */
export class ProtobufBodyError extends Error {
  constructor(
    message: string,
    /** 415: a type with no protobuf form here; otherwise the body is malformed (400). */
    readonly unsupportedType = false,
  ) {
    super(message);
  }
}
