/**
 * The base CEL environment: @marcbachmann/cel-js with Kubernetes' options (optional types on,
 * heterogeneous list/map literals allowed, parse-time size limits on) and every library we add on
 * top. The admission environments are clones of it with their variables declared.
 */
import { Environment, type EnvironmentOptions } from '@marcbachmann/cel-js';
import { registerConversions } from './lib/conversions.js';
import { ipNamespaceConstant, registerIP } from './lib/ip.js';
import { registerLists } from './lib/lists.js';
import { registerOptionalEquality } from './lib/optionals.js';
import { registerOptionalMacros } from './lib/optional-macros.js';
import { registerQuantity } from './lib/quantity.js';
import { registerRegex } from './lib/regex.js';
import { registerStrings } from './lib/strings.js';
import { registerURL } from './lib/url.js';
import { registerFormat } from './lib/format.js';
import { registerSemver } from './lib/semver.js';

export const BASE_OPTIONS: EnvironmentOptions = {
  enableOptionalTypes: true,
  homogeneousAggregateLiterals: false,
  unlistedVariablesAreDyn: false,
  limits: { maxAstNodes: 10_000, maxDepth: 250, maxListElements: 1000, maxMapEntries: 1000, maxCallArguments: 32 },
};

/** A fresh environment with every library registered (variables are the caller's). */
export function createCelEnvironment(options: EnvironmentOptions = {}): Environment {
  const env = new Environment({ ...BASE_OPTIONS, ...options });
  registerConversions(env);
  registerStrings(env);
  registerLists(env);
  registerOptionalEquality(env);
  registerOptionalMacros(env);
  registerRegex(env);
  registerURL(env);
  registerIP(env);
  ipNamespaceConstant(env);
  registerQuantity(env);
  registerFormat(env);
  registerSemver(env);
  return env;
}
