//! One script's interpreter on one thread: a QuickJS runtime with its limits, and a context
//! holding only the language, RegExp, JSON, Map and Set and Promise (no clock, no I/O of any
//! kind: QuickJS's `std` and `os` modules are never added, nor a module loader).
//!
//! What is isolated, and how:
//! - The script's top level runs again at the start of every call, as the body of a function:
//!   each call gets its own top-level bindings (`let`, `const`, `var`, functions), its own
//!   closures and whatever they make; nothing a call makes is reachable from the next one.
//! - What the calls do share, the built-in objects and the global object, is frozen, deep,
//!   before the script first runs: changing `Array.prototype` or a global throws.
//! - No code is compiled from a string: `eval` is gone and the `Function`, generator and
//!   async function constructors throw.
//! - Promise jobs a call leaves are run to their end within the call's budget; if they do
//!   not end, the call fails and the sandbox is thrown away.
//! - Each loaded [`crate::Script`] (each site) has a sandbox of its own on each thread.
//!
//! Budgets hold inside the built-ins too: the array methods that walk a `length` in C
//! without polling the interrupt refuse lengths past 4 Mi (see `lockdown.rs`), and an answer
//! of more than [`convert::MAX_VALUES`] values is refused before kumo reads it.
//!
//! The script also runs once when loaded, in a context of its own that is then dropped, so a
//! mistake in it is an error at load, with its line and column.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rquickjs::context::{EvalOptions, intrinsic};
use rquickjs::function::Args;
use rquickjs::{CatchResultExt, CaughtError, Context, Ctx, Function, Object, Persistent, Runtime, Value};

use crate::convert;
use crate::lockdown::lockdown;
use crate::page::{self, Current, Page};
use crate::{HOOKS, Limits, ScriptError};

/// What a script's context is built with; anything else does not exist for it. Promise is
/// there because async functions and `import()` need its classes: without them, their
/// objects could not be freed and QuickJS aborts when the runtime is.
type Intrinsics = (
    intrinsic::Eval,
    intrinsic::RegExpCompiler,
    intrinsic::RegExp,
    intrinsic::Json,
    intrinsic::MapSet,
    intrinsic::Promise,
);

/// How long loading a script may take (its top level runs once per thread).
const LOAD_BUDGET: Duration = Duration::from_secs(1);

/// Promise jobs run after one call at most; more, and the sandbox is made again.
const MAX_JOBS: usize = 10_000;

/// No deadline.
const NONE: u64 = u64::MAX;

/// Each hook's number of arguments, in the order of [`HOOKS`].
const ARITY: [usize; HOOKS.len()] = [2, 3, 1, 2, 1];

pub(crate) struct Sandbox {
    // The handles first: they must be freed before the runtime is.
    /// The script as one function: its top level, then a call of the hook its first
    /// argument names (by its place in [`HOOKS`]) with the others.
    body: Persistent<Function<'static>>,
    /// What every page object inherits: `body`, `headers` and the query methods.
    page_proto: Persistent<Object<'static>>,
    /// The page the running call was handed, and the number of the next one.
    current: Current,
    pages: Cell<f64>,
    defines: [bool; HOOKS.len()],
    context: Context,
    runtime: Runtime,
    /// When the running call must stop, in nanoseconds after `epoch` ([`NONE`]: never).
    deadline: Arc<AtomicU64>,
    epoch: Instant,
    limits: Limits,
    /// Past a failure that leaves the runtime unfit (memory, jobs left): the next call makes
    /// another sandbox.
    spent: Cell<bool>,
}

impl Sandbox {
    /// Runs `source` (named `file` in errors) once to check it, then makes the sandbox its
    /// calls run in.
    pub fn load(source: &str, file: &str, limits: Limits) -> Result<Self, ScriptError> {
        let load_error = |message: String| load_error(file, message);
        if crate::stopping() {
            return Err(load_error("kumo is stopping".into()));
        }
        let runtime = Runtime::new().map_err(|e| load_error(e.to_string()))?;
        runtime.set_memory_limit(limits.memory);
        runtime.set_max_stack_size(limits.stack);
        let deadline = Arc::new(AtomicU64::new(NONE));
        let epoch = Instant::now();
        let watched = deadline.clone();
        // Polled by the interpreter as it runs (every few thousand operations): past the
        // deadline, or once kumo stops now, the call is cut short with an uncatchable exception.
        runtime.set_interrupt_handler(Some(Box::new(move || {
            let d = watched.load(Ordering::Relaxed);
            crate::stopping() || (d != NONE && epoch.elapsed().as_nanos() as u64 > d)
        })));
        deadline.store(epoch.elapsed().saturating_add(LOAD_BUDGET).as_nanos() as u64, Ordering::Relaxed);
        let loaded = Self::build(&runtime, source, file);
        deadline.store(NONE, Ordering::Relaxed);
        let (body, page_proto, current, defines, context) = loaded?;
        Ok(Sandbox {
            body,
            page_proto,
            current,
            pages: Cell::new(0.0),
            defines,
            context,
            runtime,
            deadline,
            epoch,
            limits,
            spent: Cell::new(false),
        })
    }

    /// The check run, then the context of the calls with the script's body compiled in it.
    #[allow(clippy::type_complexity)]
    fn build(
        runtime: &Runtime,
        source: &str,
        file: &str,
    ) -> Result<
        (Persistent<Function<'static>>, Persistent<Object<'static>>, Current, [bool; HOOKS.len()], Context),
        ScriptError,
    > {
        let load_error = |message: String| load_error(file, message);
        let defines = {
            let check = Context::custom::<Intrinsics>(runtime).map_err(|e| load_error(e.to_string()))?;
            check.with(|ctx| check_run(&ctx, source, file))?
        };
        // What the check run made is garbage now; some of it in cycles.
        runtime.run_gc();
        let context = Context::custom::<Intrinsics>(runtime).map_err(|e| load_error(e.to_string()))?;
        let current: Current = Rc::new(RefCell::new(None));
        let made = context.with(|ctx| {
            let located = |e: CaughtError<'_>| located(file, &e);
            let proto = page::prototype(&ctx, current.clone()).catch(&ctx).map_err(located)?;
            lockdown(&ctx, true, Some(proto.clone())).catch(&ctx).map_err(located)?;
            let body: Function =
                ctx.eval_with_options(wrap(source, &defines), options(file)).catch(&ctx).map_err(located)?;
            Ok::<_, ScriptError>((Persistent::save(&ctx, body), Persistent::save(&ctx, proto)))
        });
        let (body, page_proto) = made?;
        Ok((body, page_proto, current, defines, context))
    }

    fn arm(&self, budget: Duration) {
        let at = self.epoch.elapsed().saturating_add(budget).as_nanos() as u64;
        self.deadline.store(at, Ordering::Relaxed);
    }

    fn disarm(&self) {
        self.deadline.store(NONE, Ordering::Relaxed);
    }

    fn past_deadline(&self) -> bool {
        let d = self.deadline.load(Ordering::Relaxed);
        d != NONE && self.epoch.elapsed().as_nanos() as u64 > d
    }

    /// Whether the script defines the hook at `index` of [`HOOKS`].
    pub fn defines(&self, index: usize) -> bool {
        self.defines[index]
    }

    /// Whether a failure left this sandbox unfit for another call.
    pub fn spent(&self) -> bool {
        self.spent.get()
    }

    /// Calls `hook` with `args` under the call budget; its answer as JSON (`None` for
    /// `undefined`).
    pub fn call(&self, index: usize, args: &[Arg<'_>]) -> Result<Option<serde_json::Value>, ScriptError> {
        let hook = HOOKS[index];
        if !self.defines[index] {
            return Ok(None);
        }
        if crate::stopping() {
            return Err(ScriptError::Stopped { hook });
        }
        self.arm(self.limits.call);
        let result = self.context.with(|ctx| {
            let answer = self.call_in(&ctx, index, args);
            // The call's promise jobs are its own: they run now, under its budget.
            match answer {
                Ok(_) if !run_jobs(&ctx) => {
                    Err(Failure::Thrown(format!("its promise jobs did not end ({MAX_JOBS} run)")))
                }
                answer => answer,
            }
        });
        // The page's data is out of the scripts' reach once its call is over.
        self.current.borrow_mut().take();
        let timed_out = self.past_deadline();
        self.disarm();
        if self.runtime.is_job_pending() {
            // Jobs left (an endless chain of them, or cut by the budget) would run in a later
            // call: this runtime is not used again.
            self.spent.set(true);
        }
        result.map_err(|e| {
            let e = match e {
                Failure::Thrown(_) if crate::stopping() => ScriptError::Stopped { hook },
                Failure::Thrown(_) if timed_out => ScriptError::Timeout { hook, budget: self.limits.call },
                Failure::Thrown(m) if m.contains("out of memory") => {
                    ScriptError::OutOfMemory { hook, limit: self.limits.memory }
                }
                Failure::Thrown(message) => ScriptError::Thrown { hook, message },
                Failure::NotJson(got) => ScriptError::BadAnswer { hook, got, wanted: "JSON data" },
                Failure::Promise => ScriptError::BadAnswer {
                    hook,
                    got: "a Promise".into(),
                    wanted: "JSON data (hooks are not async)",
                },
            };
            if matches!(e, ScriptError::OutOfMemory { .. }) {
                // A runtime that hit its limit is not trusted again.
                self.spent.set(true);
            }
            e
        })
    }

    fn call_in<'js>(
        &self,
        ctx: &Ctx<'js>,
        index: usize,
        args: &[Arg<'_>],
    ) -> Result<Option<serde_json::Value>, Failure> {
        let thrown = |e: CaughtError<'_>| Failure::Thrown(message_of(&e));
        let body: Function = self.body.clone().restore(ctx).catch(ctx).map_err(thrown)?;
        let mut call = Args::new(ctx.clone(), args.len() + 1);
        call.this(ctx.globals()).catch(ctx).map_err(thrown)?;
        call.push_arg(index as i32).catch(ctx).map_err(thrown)?;
        for a in args {
            // Strings and numbers as they are (most calls pass a URL and a depth); only
            // objects go through JSON.
            let pushed = match a {
                Arg::Str(s) => call.push_arg(*s),
                Arg::Num(n) => call.push_arg(*n),
                Arg::Null => call.push_arg(Value::new_null(ctx.clone())),
                Arg::Object(fields) => match convert::object_to_js(ctx, fields) {
                    Ok(v) => call.push_arg(v),
                    Err(e) => Err(e),
                },
                Arg::Page(page) => match self.page_object(ctx, page) {
                    Ok(v) => call.push_arg(v),
                    Err(e) => Err(e),
                },
            };
            pushed.catch(ctx).map_err(thrown)?;
        }
        let answer: Value = body.call_arg(call).catch(ctx).map_err(thrown)?;
        if answer.is_undefined() {
            return Ok(None);
        }
        if answer.is_promise() {
            return Err(Failure::Promise);
        }
        match convert::from_js(&answer) {
            Ok(data) => return Ok(data),
            Err(convert::NotPlain::TooLarge) => {
                return Err(Failure::NotJson(format!("more than {} values", convert::MAX_VALUES)));
            }
            Err(convert::NotPlain::Other) => {}
        }
        let text = ctx.json_stringify(answer).catch(ctx).map_err(thrown)?;
        match text {
            None => Ok(None),
            Some(s) => {
                let s = s.to_string().map_err(|e| Failure::NotJson(e.to_string()))?;
                serde_json::from_str(&s).map(Some).map_err(|_| Failure::NotJson(s))
            }
        }
    }

    /// The object `page` is for this call: the page becomes the one its methods read.
    fn page_object<'js>(&self, ctx: &Ctx<'js>, page: &Page) -> rquickjs::Result<Object<'js>> {
        let n = self.pages.get() + 1.0;
        self.pages.set(n);
        *self.current.borrow_mut() = Some((n, page.0.clone()));
        let proto = self.page_proto.clone().restore(ctx)?;
        page::object(ctx, &proto, &page.0, n)
    }
}

/// One argument of a call.
pub(crate) enum Arg<'a> {
    Str(&'a str),
    Num(f64),
    Null,
    /// An object, made in the sandbox field by field.
    Object(&'a serde_json::Map<String, serde_json::Value>),
    /// A page: an object with its URL and status, whose body, headers and queries are read
    /// from the page's data only when the script asks for them.
    Page(&'a Page),
}

/// Why a call failed, before it is named for its hook.
enum Failure {
    Thrown(String),
    NotJson(String),
    Promise,
}

/// Runs `source` as the global script it is, in a context of its own (locked down as the
/// calls' is, its global object left open for the script's declarations): a mistake in it
/// is an error at its line and column. Answers which hooks it defines.
fn check_run(ctx: &Ctx<'_>, source: &str, file: &str) -> Result<[bool; HOOKS.len()], ScriptError> {
    let located = |e: CaughtError<'_>| located(file, &e);
    lockdown(ctx, false, None).catch(ctx).map_err(located)?;
    ctx.eval_with_options::<(), _>(source, options(file)).catch(ctx).map_err(located)?;
    // By name, so that `const allow = …` counts as well as `function allow`.
    let kinds = HOOKS.map(|h| format!("typeof {h} === 'function'")).join(",");
    let defines: Vec<bool> = ctx.eval(format!("[{kinds}]")).catch(ctx).map_err(located)?;
    let mut out = [false; HOOKS.len()];
    for (o, d) in out.iter_mut().zip(defines) {
        *o = d;
    }
    if !run_jobs(ctx) {
        return Err(load_error(file, format!("its top level left more than {MAX_JOBS} promise jobs")));
    }
    Ok(out)
}

/// Runs the promise jobs waiting in `ctx`; false when [`MAX_JOBS`] ran and more may wait.
fn run_jobs(ctx: &Ctx<'_>) -> bool {
    let mut ran = 0;
    while ran < MAX_JOBS && ctx.execute_pending_job() {
        ran += 1;
    }
    ran < MAX_JOBS
}

/// How a script's text is evaluated: as a global, strict script named `file` in errors.
fn options(file: &str) -> EvalOptions {
    let mut opts = EvalOptions::default();
    opts.global = true;
    opts.strict = true;
    opts.filename = Some(file.to_string());
    opts
}

/// An error loading the script `file`, at no particular place in it.
fn load_error(file: &str, message: String) -> ScriptError {
    ScriptError::Load { file: file.into(), line: 0, column: 0, message }
}

/// The script as the body of a function whose first argument picks the hook to call. The
/// source ran as a script of its own first, so its statements are whole: it cannot close the
/// function early. Its first line keeps its number.
fn wrap(source: &str, defines: &[bool; HOOKS.len()]) -> String {
    let mut text = String::with_capacity(source.len() + 300);
    text.push_str("(function () {'use strict';");
    text.push_str(source);
    text.push_str("\n;switch (arguments[0]) {");
    for (i, hook) in HOOKS.iter().enumerate().filter(|(i, _)| defines[*i]) {
        let args: Vec<String> = (1..=ARITY[i]).map(|a| format!("arguments[{a}]")).collect();
        text.push_str(&format!("case {i}: return {hook}({});", args.join(", ")));
    }
    text.push_str("}})");
    text
}

/// A thrown value's message (an Error's, with its kind).
fn message_of(e: &CaughtError<'_>) -> String {
    match e {
        CaughtError::Exception(ex) => {
            let kind = ex.get::<_, String>("name").unwrap_or_else(|_| "Error".into());
            format!("{kind}: {}", ex.message().unwrap_or_default())
        }
        CaughtError::Value(v) => format!("{v:?}"),
        CaughtError::Error(e) => e.to_string(),
    }
}

/// A load error, at the line and column its stack names in `file`.
fn located(file: &str, e: &CaughtError<'_>) -> ScriptError {
    let message = message_of(e);
    let stack = match e {
        CaughtError::Exception(ex) => ex.stack().unwrap_or_default(),
        _ => String::new(),
    };
    let (line, column) = position(&format!("{stack}\n{message}"), file).unwrap_or((0, 0));
    ScriptError::Load { file: file.into(), line, column, message }
}

/// The first `file:LINE:COLUMN` in `text`.
fn position(text: &str, file: &str) -> Option<(u32, u32)> {
    let marker = format!("{file}:");
    text.match_indices(&marker).find_map(|(at, _)| {
        let rest = &text[at + marker.len()..];
        let mut parts = rest.splitn(3, ':');
        let line = parts.next()?.parse().ok()?;
        let column: String = parts.next()?.chars().take_while(|c| c.is_ascii_digit()).collect();
        Some((line, column.parse().ok()?))
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_position_is_read_from_a_stack_line() {
        assert_eq!(super::position("    at f (rules.js:3:7)\n", "rules.js"), Some((3, 7)));
        assert_eq!(super::position("nothing here", "rules.js"), None);
    }
}
