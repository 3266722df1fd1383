import { readFile } from 'node:fs/promises';

/** What the etcd flags name (`--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile`, as kube-apiserver names them; `--etcd-username`, `--etcd-password-file`). */
export interface EtcdFlags {
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
  auth?: { username: string; passwordFile: string };
}

/** The etcd client's TLS files and password, read once at start: a missing file stops the server there. */
export async function etcdCredentials(etcd: EtcdFlags): Promise<{ tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer }; auth?: { username: string; password: string } }> {
  const read = (f: string | undefined) => (f === undefined ? undefined : readFile(f));
  const t = etcd.tls;
  const tls = t && { ca: await read(t.caFile), cert: await read(t.certFile), key: await read(t.keyFile) };
  const auth = etcd.auth && { username: etcd.auth.username, password: (await readFile(etcd.auth.passwordFile, 'utf8')).trimEnd() };
  return { ...(tls ? { tls } : {}), ...(auth ? { auth } : {}) };
}
