// Preloaded into every test file's process by scripts/run-tests.mjs (`--import`): gives each test and hook that
// sets no `timeout` of its own (and sits in no suite that sets one) a time limit, so a hang fails that test with
// "test timed out after …ms" and the run goes on. node:test has no option for a per-test default in Node 20
// (`--test-timeout` there bounds a whole file), so the exported functions are wrapped and the ESM bindings re-synced
// (module.syncBuiltinESMExports, the documented way to update a builtin's named exports).
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { runInThisContext } from 'node:vm';

const require = createRequire(import.meta.url);
const nodeTest = require('node:test');

const limit = Number(process.env.TEST_TIMEOUT_MS ?? 300_000);
/** explicit timeouts of the suites being built (describe bodies run synchronously while their suite is created) */
const suiteTimeouts = [];

/** node:test's (name?, options?, fn?) → [name, options, fn] with undefined for what was left out */
function split(args) {
  let [name, options, fn] = args;
  if (typeof name === 'function') return [undefined, {}, name];
  if (name !== null && typeof name === 'object') return [undefined, name, options];
  if (typeof options === 'function') return [name, {}, options];
  return [name, options ?? {}, fn];
}
function join(name, options, fn) {
  return name === undefined ? [options, fn] : [name, options, fn];
}

/**
 * node:test records where a test was declared from its direct caller, which would now be this file. So the call
 * is made from a one-line function compiled with the declaring line's file name, line and column: reports still
 * point at the test file.
 */
const callers = new Map();
function callFromCaller(original, args) {
  const saved = Error.prepareStackTrace;
  let site;
  Error.prepareStackTrace = (_, frames) => frames;
  try {
    const holder = {};
    Error.captureStackTrace(holder, callFromCaller);
    site = holder.stack[1]; // [0] is the wrapper, [1] the test file's call
  } finally {
    Error.prepareStackTrace = saved;
  }
  const file = site?.getFileName();
  if (!file) return original(...args);
  const key = `${file}:${site.getLineNumber()}:${site.getColumnNumber()}`;
  let call = callers.get(key);
  if (!call) {
    const code = `(f, args) =>\n${' '.repeat(site.getColumnNumber() - 1)}f(...args)`;
    call = runInThisContext(code, { filename: file, lineOffset: site.getLineNumber() - 2 });
    callers.set(key, call);
  }
  return call(original, args);
}
const inheritsLimit = (options) => options.timeout !== undefined || suiteTimeouts.some((t) => t !== undefined);

function wrapTest(original) {
  const wrapped = (...args) => {
    const [name, options, fn] = split(args);
    return callFromCaller(original, inheritsLimit(options) ? args : join(name, { ...options, timeout: limit }, fn));
  };
  return Object.assign(wrapped, original);
}
function wrapSuite(original) {
  const wrapped = (...args) => {
    const [, options] = split(args);
    suiteTimeouts.push(options.timeout);
    try { return callFromCaller(original, args); } finally { suiteTimeouts.pop(); }
  };
  return Object.assign(wrapped, original);
}
function wrapHook(original) {
  return (fn, options = {}) => {
    return callFromCaller(original, [fn, inheritsLimit(options) ? options : { ...options, timeout: limit }]);
  };
}

if (Number.isFinite(limit) && limit > 0) {
  nodeTest.it = wrapTest(nodeTest.it);
  nodeTest.test = wrapTest(nodeTest.test);
  nodeTest.describe = wrapSuite(nodeTest.describe);
  nodeTest.suite &&= wrapSuite(nodeTest.suite);
  for (const hook of ['before', 'after', 'beforeEach', 'afterEach']) nodeTest[hook] = wrapHook(nodeTest[hook]);
  syncBuiltinESMExports();
}
