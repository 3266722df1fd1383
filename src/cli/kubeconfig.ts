/** `orchd kubeconfig`: a kubeconfig (YAML) for kubectl and other clients of the server at --server, on stdout. */
import { readFile } from 'node:fs/promises';
import { command, CommandError, type Flags } from './flags.js';

function serverUrl(text: string): string {
  if (!/^https?:\/\/[^/\s]+\/?$/.test(text)) throw new Error(`${JSON.stringify(text)} is not a server URL (http://host:port or https://host:port)`);
  return text.replace(/\/$/, '');
}

const FLAGS = {
  server: { value: 'URL', default: 'http://127.0.0.1:8080', help: 'the server the kubeconfig reaches', parse: serverUrl },
  'certificate-authority': { value: 'FILE', help: "PEM to trust for an https server (its data folder's apiserver.crt when it made a self-signed one)" },
  token: { value: 'TOKEN', help: 'a bearer token its authentication accepts' },
} as const satisfies Flags;

export const kubeconfigCommand = command({
  name: 'kubeconfig',
  summary: 'Print a kubeconfig (YAML) for kubectl and other clients of the server at --server.',
  flags: FLAGS,
  notes: 'Example: orchd kubeconfig --server http://127.0.0.1:8080 > kc.yaml && kubectl --kubeconfig kc.yaml get namespaces',
  async run({ values }, io) {
    const caFile = values['certificate-authority'];
    const certificateAuthority =
      caFile === undefined
        ? undefined
        : await readFile(caFile).catch((err: NodeJS.ErrnoException) => {
            throw new CommandError(`--certificate-authority: ${caFile}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
          });
    const { kubeconfigYaml } = await import('../config/kubeconfig-yaml.js');
    io.out.write(kubeconfigYaml({ server: values.server, certificateAuthority, token: values.token }));
    return 0;
  },
});
