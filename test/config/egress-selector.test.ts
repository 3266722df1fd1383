import { describe, expect, it } from 'vitest';
import { V1, V1BETA1 } from '../../src/config/document.js';
import { egressSelectorDocument } from '../../src/config/egress-selector.js';
import { check, writeFile } from './support.js';
import { tempDir } from '../helpers/temp.js';

type Doc = any;

const dir = tempDir();
const ca = writeFile(dir, 'ca.crt', 'ca');
const cert = writeFile(dir, 'client.crt', 'cert');
const clientKey = writeFile(dir, 'client.key', 'key');

const base = (): Doc => ({
  apiVersion: V1BETA1,
  kind: 'EgressSelectorConfiguration',
  egressSelections: [
    { name: 'cluster', connection: { proxyProtocol: 'HTTPConnect', transport: { tcp: { url: 'https://proxy.example.com:8131', tlsConfig: { caBundle: ca, clientCert: cert, clientKey } } } } },
    { name: 'controlplane', connection: { proxyProtocol: 'Direct' } },
    { name: 'etcd', connection: { proxyProtocol: 'GRPC', transport: { uds: { udsName: '/run/konnectivity.sock' } } } },
  ],
});

interface Row {
  name: string;
  edit: (d: Doc) => void;
  want: [string, string][];
}
const c0 = 'egressSelections[0].connection';
const tcp = (d: Doc) => d.egressSelections[0].connection.transport.tcp;

const rows: Row[] = [
  { name: 'the base document', edit: () => {}, want: [] },
  {
    name: 'no selections',
    edit: (d) => {
      d.egressSelections = [];
    },
    want: [],
  },
  // names
  {
    name: 'name missing',
    edit: (d) => {
      delete d.egressSelections[1].name;
    },
    want: [['FieldValueRequired', 'egressSelections[1].name']],
  },
  {
    name: 'unknown name',
    edit: (d) => {
      d.egressSelections[1].name = 'apiserver';
    },
    want: [['FieldValueNotSupported', 'egressSelections[1].name']],
  },
  {
    name: 'master (deprecated controlplane)',
    edit: (d) => {
      d.egressSelections[1].name = 'master';
    },
    want: [],
  },
  {
    name: 'master next to controlplane',
    edit: (d) => {
      d.egressSelections.push({ name: 'master', connection: { proxyProtocol: 'Direct' } });
    },
    want: [['FieldValueDuplicate', 'egressSelections[3].name']],
  },
  {
    name: 'cluster twice',
    edit: (d) => {
      d.egressSelections.push({ name: 'cluster', connection: { proxyProtocol: 'Direct' } });
    },
    want: [['FieldValueDuplicate', 'egressSelections[3].name']],
  },
  // connection / protocol
  {
    name: 'connection missing',
    edit: (d) => {
      delete d.egressSelections[1].connection;
    },
    want: [['FieldValueRequired', 'egressSelections[1].connection']],
  },
  {
    name: 'protocol missing',
    edit: (d) => {
      delete d.egressSelections[1].connection.proxyProtocol;
    },
    want: [['FieldValueRequired', 'egressSelections[1].connection.proxyProtocol']],
  },
  {
    name: 'protocol unknown',
    edit: (d) => {
      d.egressSelections[1].connection.proxyProtocol = 'SOCKS5';
    },
    want: [['FieldValueNotSupported', 'egressSelections[1].connection.proxyProtocol']],
  },
  {
    name: 'Direct with a transport',
    edit: (d) => {
      d.egressSelections[1].connection.transport = { uds: { udsName: '/x' } };
    },
    want: [['FieldValueInvalid', 'egressSelections[1].connection.transport']],
  },
  {
    name: 'HTTPConnect without transport',
    edit: (d) => {
      delete d.egressSelections[0].connection.transport;
    },
    want: [['FieldValueRequired', `${c0}.transport`]],
  },
  {
    name: 'HTTPConnect with neither tcp nor uds',
    edit: (d) => {
      d.egressSelections[0].connection.transport = {};
    },
    want: [['FieldValueRequired', `${c0}.transport.tcp`]],
  },
  {
    name: 'HTTPConnect with both tcp and uds',
    edit: (d) => {
      d.egressSelections[0].connection.transport.uds = { udsName: '/x' };
    },
    want: [['FieldValueInvalid', `${c0}.transport.tcp`]],
  },
  {
    name: 'HTTPConnect over uds',
    edit: (d) => {
      d.egressSelections[0].connection.transport = { uds: { udsName: '/run/proxy.sock' } };
    },
    want: [],
  },
  {
    name: 'GRPC over tcp',
    edit: (d) => {
      d.egressSelections[2].connection.transport = { tcp: { url: 'http://proxy:8131' } };
    },
    want: [['FieldValueRequired', 'egressSelections[2].connection.transport.uds']],
  },
  {
    name: 'GRPC without transport',
    edit: (d) => {
      delete d.egressSelections[2].connection.transport;
    },
    want: [['FieldValueRequired', 'egressSelections[2].connection.transport']],
  },
  // uds
  {
    name: 'udsName missing',
    edit: (d) => {
      d.egressSelections[2].connection.transport.uds = {};
    },
    want: [['FieldValueRequired', 'egressSelections[2].connection.transport.uds.udsName']],
  },
  {
    name: 'udsName with unix://',
    edit: (d) => {
      d.egressSelections[2].connection.transport.uds.udsName = 'unix:///run/k.sock';
    },
    want: [['FieldValueInvalid', 'egressSelections[2].connection.transport.uds.udsName']],
  },
  // tcp url and TLS
  {
    name: 'tcp url missing',
    edit: (d) => {
      delete tcp(d).url;
    },
    want: [['FieldValueRequired', `${c0}.transport.tcp.url`]],
  },
  {
    name: 'tcp url with another scheme',
    edit: (d) => {
      tcp(d).url = 'ftp://proxy';
    },
    want: [['FieldValueInvalid', `${c0}.transport.tcp.url`]],
  },
  {
    name: 'http:// without TLS',
    edit: (d) => {
      tcp(d).url = 'http://proxy:8131';
      delete tcp(d).tlsConfig;
    },
    want: [],
  },
  {
    name: 'http:// with TLS files',
    edit: (d) => {
      tcp(d).url = 'http://proxy:8131';
    },
    want: [
      ['FieldValueForbidden', `${c0}.transport.tcp.tlsConfig.caBundle`],
      ['FieldValueForbidden', `${c0}.transport.tcp.tlsConfig.clientCert`],
      ['FieldValueForbidden', `${c0}.transport.tcp.tlsConfig.clientKey`],
    ],
  },
  {
    name: 'https:// without tlsConfig',
    edit: (d) => {
      delete tcp(d).tlsConfig;
    },
    want: [['FieldValueRequired', `${c0}.transport.tcp.tlsConfig`]],
  },
  {
    name: 'https:// without caBundle (system roots)',
    edit: (d) => {
      delete tcp(d).tlsConfig.caBundle;
    },
    want: [],
  },
  {
    name: 'https:// with a missing caBundle',
    edit: (d) => {
      tcp(d).tlsConfig.caBundle = `${dir}/none.crt`;
    },
    want: [['FieldValueInvalid', `${c0}.transport.tcp.tlsConfig.caBundle`]],
  },
  {
    name: 'https:// without clientCert',
    edit: (d) => {
      delete tcp(d).tlsConfig.clientCert;
    },
    want: [['FieldValueRequired', `${c0}.transport.tcp.tlsConfig.clientCert`]],
  },
  {
    name: 'https:// with a missing clientCert',
    edit: (d) => {
      tcp(d).tlsConfig.clientCert = `${dir}/none.crt`;
    },
    want: [['FieldValueInvalid', `${c0}.transport.tcp.tlsConfig.clientCert`]],
  },
  {
    name: 'https:// without clientKey',
    edit: (d) => {
      delete tcp(d).tlsConfig.clientKey;
    },
    want: [['FieldValueRequired', `${c0}.transport.tcp.tlsConfig.clientKey`]],
  },
  {
    name: 'https:// with a missing clientKey',
    edit: (d) => {
      tcp(d).tlsConfig.clientKey = `${dir}/none.key`;
    },
    want: [['FieldValueInvalid', `${c0}.transport.tcp.tlsConfig.clientKey`]],
  },
];

describe('EgressSelectorConfiguration validation', () => {
  it.each(rows)('$name', ({ edit, want }) => {
    const doc = base();
    edit(doc);
    const got = check(egressSelectorDocument, doc);
    expect(got.errors).toEqual(want);
    expect(got.result.ok).toBe(want.length === 0);
  });

  it('reads selections by canonical name', () => {
    const doc = base();
    doc.egressSelections[1].name = 'master';
    expect(check(egressSelectorDocument, doc).value).toEqual({
      selections: {
        cluster: { proxyProtocol: 'HTTPConnect', transport: { tcp: { url: 'https://proxy.example.com:8131', tlsConfig: { caBundle: ca, clientCert: cert, clientKey } } } },
        controlplane: { proxyProtocol: 'Direct' },
        etcd: { proxyProtocol: 'GRPC', transport: { uds: { udsName: '/run/konnectivity.sock' } } },
      },
    });
  });

  it('exists only in apiserver.orch.io/v1beta1', () => {
    expect(check(egressSelectorDocument, { ...base(), apiVersion: V1 }).errors).toEqual([['FieldValueNotSupported', 'apiVersion']]);
  });
});
