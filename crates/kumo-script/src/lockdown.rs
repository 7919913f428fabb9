//! What a script's context is made into before any script runs in it: the built-in objects
//! it shares with every call frozen, deep (their prototypes, methods and accessors, the
//! hidden ones such as `%ArrayIteratorPrototype%` too), and no way to compile code from a
//! string. Run from Rust, so it needs nothing a script could replace first.

use rquickjs::{Ctx, Function, Object};

/// Takes `(sealGlobal, extra)`: `extra` is one more object to freeze (the page prototype);
/// with `sealGlobal` false, the global object keeps taking new properties (the load-time run
/// of a script declares its functions there) while the ones it has are fixed.
const LOCKDOWN: &str = r#"(function (sealGlobal, extra) {
  'use strict';
  const { defineProperty, getOwnPropertyDescriptor, getPrototypeOf, freeze } = Object;
  const ownKeys = Reflect.ownKeys;
  // eval goes, and each function constructor (reached by name or through any function's
  // `constructor`) throws: a script cannot compile code once kumo has loaded it.
  const kinds = [
    ['Function', Function.prototype],
    ['GeneratorFunction', getPrototypeOf(function* () {})],
    ['AsyncFunction', getPrototypeOf(async function () {})],
    ['AsyncGeneratorFunction', getPrototypeOf(async function* () {})],
  ];
  for (const [name, proto] of kinds) {
    const refuse = function () {
      throw new EvalError(name + ': a kumo script cannot compile code from a string');
    };
    defineProperty(refuse, 'prototype', { value: proto });
    defineProperty(refuse, 'name', { value: name });
    defineProperty(proto, 'constructor', { value: refuse });
  }
  defineProperty(globalThis, 'Function', { value: Function.prototype.constructor });
  delete globalThis.eval;
  // Properties scripts commonly set on their own objects (`e.name = …` in an Error subclass,
  // `o.toString = …`) would throw once inherited from a frozen prototype: each becomes an
  // accessor whose setter gives the object its own property instead.
  const originals = [];
  const tame = (obj, key) => {
    const d = getOwnPropertyDescriptor(obj, key);
    if (!d || !('value' in d) || !d.configurable) return;
    const value = d.value;
    originals.push(value);
    defineProperty(obj, key, {
      get() { return value; },
      set(v) {
        if (this === obj) throw new TypeError('cannot change the built-in ' + String(key));
        defineProperty(this, key, { value: v, writable: true, enumerable: true, configurable: true });
      },
      enumerable: d.enumerable,
      configurable: false,
    });
  };
  for (const k of ['constructor', 'toString', 'toLocaleString', 'valueOf', 'hasOwnProperty']) {
    tame(Object.prototype, k);
  }
  for (const E of [Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError]) {
    for (const k of ['constructor', 'name', 'message', 'toString']) tame(E.prototype, k);
  }
  // Array methods that loop over `length` in C, never polling the budget: a sparse array or
  // an array-like with a huge length would hold the thread for hours. Each first checks the
  // length it will read (a plain number, not a getter that could answer otherwise next
  // time); flat and flatMap are written in JavaScript, whose loops the budget cuts.
  const MAX_LENGTH = 1 << 22;
  const lengthOf = (o) => {
    let p = o === null || o === undefined ? null : Object(o);
    for (let depth = 0; p !== null && depth < 10000; depth++) {
      const d = getOwnPropertyDescriptor(p, 'length');
      if (d !== undefined) {
        if (!('value' in d) || (typeof d.value !== 'number' && d.value !== undefined)) {
          throw new TypeError('an array-like\'s length must be a number here, not a getter or an object');
        }
        return d.value === undefined ? 0 : d.value;
      }
      p = getPrototypeOf(p);
    }
    return 0;
  };
  const bounded = (n) => {
    if (n > MAX_LENGTH) throw new RangeError('arrays longer than ' + MAX_LENGTH + ' are refused here');
  };
  const AP = Array.prototype;
  const apply = Reflect.apply;
  const guard = (name, more) => {
    const original = AP[name];
    if (typeof original !== 'function') return;
    const wrapped = {
      [name](...args) {
        bounded(lengthOf(this) + (more ? more(args) : 0));
        return apply(original, this, args);
      },
    }[name];
    defineProperty(AP, name, { value: wrapped });
  };
  const objectsLength = (args) => {
    let n = 0;
    for (const a of args) if (a !== null && typeof a === 'object') n += lengthOf(a);
    return n;
  };
  for (const name of ['join', 'toLocaleString', 'copyWithin', 'reverse', 'sort', 'unshift', 'shift',
                      'splice', 'slice', 'fill', 'toSorted', 'toReversed', 'toSpliced', 'with']) {
    guard(name);
  }
  guard('concat', objectsLength);
  const push = AP.push;
  const isArray = Array.isArray;
  const flatten = (out, source, depth, mapper, thisArg) => {
    const n = lengthOf(source);
    for (let i = 0; i < n; i++) {
      if (!(i in source)) continue;
      let v = source[i];
      if (mapper !== undefined) v = apply(mapper, thisArg, [v, i, source]);
      if (depth > 0 && isArray(v)) flatten(out, v, depth - 1);
      else apply(push, out, [v]);
    }
    return out;
  };
  defineProperty(AP, 'flat', { value: {
    flat(depth) {
      const d = depth === undefined ? 1 : Math.trunc(Number(depth)) || 0;
      return flatten([], Object(this), d);
    },
  }.flat });
  defineProperty(AP, 'flatMap', { value: {
    flatMap(mapper, thisArg) {
      if (typeof mapper !== 'function') throw new TypeError('flatMap: the mapper is not a function');
      return flatten([], Object(this), 1, mapper, thisArg);
    },
  }.flatMap });
  // JSON.stringify walks an array's holes in C too: with a function replacer it calls back
  // for each element, and a JavaScript call is where the budget is polled.
  const stringify = JSON.stringify;
  defineProperty(JSON, 'stringify', { value: {
    stringify(value, replacer, space) {
      if (isArray(replacer)) return stringify(value, replacer, space);
      const own = typeof replacer === 'function' ? replacer : undefined;
      return stringify(value, function (k, v) { return own === undefined ? v : apply(own, this, [k, v]); }, space);
    },
  }.stringify });
  // Everything reachable from the globals, and the intrinsics only instances lead to.
  const todo = [
    globalThis, extra, originals,
    getPrototypeOf(function* () {}), (function* () {})(),
    getPrototypeOf(async function () {}),
    getPrototypeOf(async function* () {}), (async function* () {})(),
    [][Symbol.iterator](), new Map().entries(), new Set().values(), ''[Symbol.iterator](),
    /x/[Symbol.matchAll](''), Promise.resolve(), (function () { return arguments; })(),
  ];
  if (typeof Iterator === 'function') {
    todo.push([].values().map((x) => x), Iterator.from({ next() { return { done: true }; } }));
    if (typeof Iterator.concat === 'function') todo.push(Iterator.concat());
  }
  const seen = new Set();
  // Bounded: the built-ins are a few thousand objects.
  for (let n = 0; todo.length > 0 && n < 1e6; n++) {
    const o = todo.pop();
    if (o === null || (typeof o !== 'object' && typeof o !== 'function') || seen.has(o)) continue;
    seen.add(o);
    todo.push(getPrototypeOf(o));
    for (const k of ownKeys(o)) {
      const d = getOwnPropertyDescriptor(o, k);
      if (d) todo.push(d.value, d.get, d.set);
    }
    if (o !== globalThis) freeze(o);
  }
  if (sealGlobal) {
    freeze(globalThis);
  } else {
    for (const k of ownKeys(globalThis)) {
      const d = getOwnPropertyDescriptor(globalThis, k);
      if (d && 'value' in d) defineProperty(globalThis, k, { writable: false, configurable: false });
      else if (d) defineProperty(globalThis, k, { configurable: false });
    }
  }
})"#;

/// Freezes `ctx`'s built-ins (and `extra`), and takes away compiling code from strings; with
/// `seal_global`, the global object is frozen too.
pub(crate) fn lockdown<'js>(
    ctx: &Ctx<'js>,
    seal_global: bool,
    extra: Option<Object<'js>>,
) -> rquickjs::Result<()> {
    let f: Function = ctx.eval(LOCKDOWN)?;
    f.call((seal_global, extra))
}
