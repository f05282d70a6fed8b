// Masked secrets (policy-format.md, "Sandboxed commands"; docs/sandbox.md, "Masked secrets"): a
// variable an allow rule masks (`"sandbox": { "mask": { "GITHUB_TOKEN": ["api.github.com"] } }`)
// reaches the command as a random stand-in, never as its value. Where the run's connections go
// through its own proxy (sandboxNetwork.ts), that proxy terminates the TLS of connections to the
// hosts named for a masked variable, with a CA this process makes once, and puts the real value
// in place of the stand-in in the requests' headers and bodies to those hosts only, re-encrypted
// to the verified host. Anywhere else (another host, plain HTTP, SOCKS, a run with every host open
// or none) the stand-in goes out as it is. The sentinels, the substitution, the CA and its leaf
// certificates are @anthropic-ai/sandbox-runtime's (its `credentials` with mode "mask" and
// `tlsTerminate`); which variables and hosts is our policy's.
import * as fs from 'node:fs';
import type { HttpProxyServerOptions } from '@anthropic-ai/sandbox-runtime/dist/sandbox/http-proxy.js';
import { SentinelRegistry } from '@anthropic-ai/sandbox-runtime/dist/sandbox/credential-sentinel.js';
import { matchesDomainPattern } from '@anthropic-ai/sandbox-runtime/dist/sandbox/domain-pattern.js';
import { createMitmCA, disposeMitmCASync, generateCa, type MitmCA } from '@anthropic-ai/sandbox-runtime/dist/sandbox/mitm-ca.js';
import { CA_TRUST_VARS } from '@anthropic-ai/sandbox-runtime/dist/sandbox/sandbox-utils.js';

/** Where the trust bundle (this process's CA, then the usual roots) appears inside the sandbox: its private /tmp, read-only. */
export const SANDBOX_TRUST_BUNDLE = '/tmp/.agentpolicy-ca/trust-bundle.crt';

/**
 * The variables that make clients in the sandbox trust the bundle: the engine's list (Node's
 * NODE_EXTRA_CA_CERTS, OpenSSL's SSL_CERT_FILE, curl's CURL_CA_BUNDLE, Python requests', pip's,
 * git's, the AWS CLI's, cargo's, deno's, gcloud's and Nix's). Most replace the tool's own store,
 * which is why the bundle carries the usual roots too.
 */
export const CA_TRUST_VARIABLES: readonly string[] = CA_TRUST_VARS;

/** The host's own CA bundles, appended to the trust bundle where they exist (a site's own roots live there). */
const SYSTEM_CA_BUNDLES = [
  '/etc/ssl/certs/ca-certificates.crt', // Debian, Ubuntu, Arch, Alpine
  '/etc/pki/tls/certs/ca-bundle.crt', // Fedora, RHEL
  '/etc/ssl/ca-bundle.pem', // openSUSE
  '/etc/ssl/cert.pem', // macOS, Alpine
];

/** The masked variables of one run, with their stand-ins. */
export interface MaskedSecrets {
  /** Every masked name: withheld from bwrap's environment and the command's (their stand-ins are set in `envArgs`). */
  readonly withheld: readonly string[];
  /** bubblewrap's arguments setting each masked variable the parent has to its stand-in. */
  readonly envArgs: readonly string[];
  /** The stand-ins and real values, this run's only (kept in memory, never written or logged). */
  readonly registry: SentinelRegistry;
  /** Whether a stand-in may ever be substituted (some variable is set and names a host). */
  readonly substitutes: boolean;
}

/** The stand-ins for the masked variables the environment has; a variable it lacks stays unset. */
export function maskSecrets(mask: Readonly<Record<string, readonly string[]>>, env: NodeJS.ProcessEnv = process.env): MaskedSecrets {
  const registry = new SentinelRegistry();
  const envArgs: string[] = [];
  let substitutes = false;
  const withheld = Object.keys(mask).sort();
  for (const name of withheld) {
    const real = env[name];
    if (real === undefined) continue;
    const hosts = mask[name] ?? [];
    // A random `fake_value_<uuid4>…` (as long as the value, where that is longer): nothing of the value in it.
    envArgs.push('--setenv', name, registry.register(name, real, hosts));
    if (hosts.length > 0 && real !== '') substitutes = true;
  }
  return { withheld, envArgs, registry, substitutes };
}

let ca: MitmCA | undefined;

/**
 * This process's CA, made on first use: its key stays in memory; the trust bundle (the CA's
 * certificate, Node's roots, NODE_EXTRA_CA_CERTS and the host's bundles) is a file in a folder
 * of its own only this user can read, removed when the process exits.
 */
export function processCa(): MitmCA {
  if (ca !== undefined) return ca;
  const made = generateCa({ cn: 'Agent Policy sandbox (one process, masked secrets)' });
  const extra = [...(process.env.SSL_CERT_FILE ? [process.env.SSL_CERT_FILE] : []), ...SYSTEM_CA_BUNDLES];
  const created = createMitmCA({ caCertPem: made.certPem, caKeyPem: made.keyPem, extraCaCertPaths: extra });
  fs.chmodSync(created.trustBundlePath, 0o600);
  process.once('exit', () => disposeMitmCASync(created));
  ca = created;
  return created;
}

/** bubblewrap's arguments that bind the trust bundle into the sandbox and point every client's trust variable at it. */
export function trustArgs(bundle: MitmCA): string[] {
  return ['--ro-bind', bundle.trustBundlePath, SANDBOX_TRUST_BUNDLE, ...CA_TRUST_VARIABLES.flatMap((name) => ['--setenv', name, SANDBOX_TRUST_BUNDLE])];
}

/** The proxy's options for substitution: terminated TLS for the hosts named, stand-ins made real there, in headers only. */
export type SecretProxyOptions = Pick<HttpProxyServerOptions, 'mitmCA' | 'shouldTerminateTLS' | 'mutateHeaders' | 'tlsTerminateUpstreamCA'>;

/**
 * What the run's HTTP proxy needs to substitute the stand-ins. Only a connection to a host named
 * for some masked variable is terminated (others stay the command's own TLS, end to end); the
 * proxy gives the hooks the connection's judged target, never the Host header. Plain HTTP gets no
 * hook (the engine's default): a stand-in sent there stays one.
 */
export function secretProxyOptions(secrets: MaskedSecrets, bundle: MitmCA): SecretProxyOptions {
  const { registry } = secrets;
  return {
    mitmCA: bundle,
    shouldTerminateTLS: (host) => registry.namesInjectableAt(host, matchesDomainPattern).length > 0,
    // Headers only, never bodies: a body is what a host may store and show back (a gist, an issue),
    // which would hand the command the real value; a header is what a host takes as a credential.
    mutateHeaders: (headers, destHost) => registry.substituteInHeaders(headers, destHost, matchesDomainPattern),
    ...(upstreamCaForTests !== undefined ? { tlsTerminateUpstreamCA: upstreamCaForTests } : {}),
  };
}

let upstreamCaForTests: string | undefined;

/**
 * TEST ONLY: the CA (PEM) the proxy's upstream TLS trusts in place of the usual roots, for a test
 * host with a certificate of the test's own (test/runtime/sandboxSecrets.test.ts); undefined
 * restores the usual roots. Nothing outside the tests calls it.
 */
export function trustUpstreamCaForTests(pem: string | undefined): void {
  upstreamCaForTests = pem;
}
