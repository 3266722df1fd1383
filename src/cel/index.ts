export { PolicyCompiler, type CelProgram, type CompileResult } from './compiler.js';
export { Activation, ConvertedValues, type AdmissionRequestAttributes } from './activation.js';
export { ProgramCache } from './cache.js';
export { type EnvKind, type EnvSchemas } from './admission-env.js';
export { type CelSchema } from './schema.js';
export { minSerializedSize } from './cost-decl.js';
export { jsonToCel, celToJson } from './values.js';
export { structTypeOf } from './lib/objects.js';
export { CelEvaluationError, CelCostLimitError, CelTimeoutError, fieldErrorText, type CelFieldError } from './errors.js';
export { DEFAULT_COST_LIMIT, DEFAULT_TIMEOUT_MS } from './budget.js';
export { createCelEnvironment } from './environment.js';
export { typeName as celTypeName } from './lib/common.js';
export type { Authorizer, CelAuthorizer, AuthorizationAttributes, AuthorizationDecision, CelUserInfo } from './lib/authorizer.js';
export { bindRegexCalls, regexProblemText } from './regex-calls.js';
export {
  compileSchemaRule,
  runSchemaRule,
  runMessageExpression,
  SchemaRuleScope,
  SCHEMA_RULE_CALL_LIMIT,
  SCHEMA_RULES_OBJECT_BUDGET,
  type CompiledSchemaRule,
  type RuleBudget,
} from './schema-rules.js';
