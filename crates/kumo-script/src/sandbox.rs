//! One script's interpreter on one thread: a QuickJS runtime with its limits and a context
//! holding only the language, RegExp, JSON, Map and Set (no clock, no eval once loaded, no
//! I/O of any kind: QuickJS's `std` and `os` modules are never added), its globals frozen
//! after the script has run so that one call leaves nothing for the next page.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rquickjs::context::{EvalOptions, intrinsic};
use rquickjs::function::Args;
use rquickjs::{CatchResultExt, CaughtError, Context, Ctx, Function, Object, Persistent, Runtime, Value};

use crate::convert;
use crate::page::{self, Current, Page};
use crate::{HOOKS, Limits, ScriptError};

/// What a script's context is built with; anything else does not exist for it.
type Intrinsics =
    (intrinsic::Eval, intrinsic::RegExpCompiler, intrinsic::RegExp, intrinsic::Json, intrinsic::MapSet);

/// How long loading a script may take (its top level runs once per thread).
const LOAD_BUDGET: Duration = Duration::from_secs(1);

/// No deadline.
const NONE: u64 = u64::MAX;

pub(crate) struct Sandbox {
    // The handles first: they must be freed before the runtime is.
    /// The hooks the script defines (by their place in [`HOOKS`]), kept as handles: a call
    /// looks nothing up by name.
    hooks: [Option<Persistent<Function<'static>>>; HOOKS.len()],
    /// What every page object inherits: `body`, `headers` and the query methods.
    page_proto: Persistent<Object<'static>>,
    /// The page the running call was handed, and the number of the next one.
    current: Current,
    pages: Cell<f64>,
    context: Context,
    _runtime: Runtime,
    /// When the running call must stop, in nanoseconds after `epoch` ([`NONE`]: never).
    deadline: Arc<AtomicU64>,
    epoch: Instant,
    limits: Limits,
}

impl Sandbox {
    /// Runs `source` (named `file` in errors) in a new sandbox.
    pub fn load(source: &str, file: &str, limits: Limits) -> Result<Self, ScriptError> {
        let load_error =
            |message: String| ScriptError::Load { file: file.into(), line: 0, column: 0, message };
        let runtime = Runtime::new().map_err(|e| load_error(e.to_string()))?;
        runtime.set_memory_limit(limits.memory);
        runtime.set_max_stack_size(limits.stack);
        let deadline = Arc::new(AtomicU64::new(NONE));
        let epoch = Instant::now();
        let watched = deadline.clone();
        // Polled by the interpreter as it runs (every few thousand operations): past the
        // deadline, the call is cut short with an uncatchable exception.
        runtime.set_interrupt_handler(Some(Box::new(move || {
            let d = watched.load(Ordering::Relaxed);
            d != NONE && epoch.elapsed().as_nanos() as u64 > d
        })));
        let context = Context::custom::<Intrinsics>(&runtime).map_err(|e| load_error(e.to_string()))?;
        let current: Current = Rc::new(RefCell::new(None));
        let loaded = context.with(|ctx| {
            // Made before the script runs, while `eval` still exists; it leaves no global.
            let proto = page::prototype(&ctx, current.clone()).catch(&ctx).map_err(|e| located(file, &e))?;
            deadline.store(epoch.elapsed().saturating_add(LOAD_BUDGET).as_nanos() as u64, Ordering::Relaxed);
            let mut opts = EvalOptions::default();
            opts.global = true;
            opts.strict = true;
            opts.filename = Some(file.to_string());
            ctx.eval_with_options::<(), _>(source, opts).catch(&ctx).map_err(|e| located(file, &e))?;
            // Nothing compiles code from strings past this point, and no call leaves a global
            // behind for the next page.
            ctx.eval::<(), _>("delete globalThis.eval; Object.freeze(globalThis);")
                .catch(&ctx)
                .map_err(|e| located(file, &e))?;
            let globals = ctx.globals();
            let hooks = HOOKS.map(|name| {
                globals
                    .get::<_, Value>(name)
                    .ok()
                    .and_then(|v| v.into_function())
                    .map(|f| Persistent::save(&ctx, f))
            });
            Ok::<_, ScriptError>((hooks, Persistent::save(&ctx, proto)))
        });
        deadline.store(NONE, Ordering::Relaxed);
        let (hooks, page_proto) = loaded?;
        Ok(Sandbox {
            hooks,
            page_proto,
            current,
            pages: Cell::new(0.0),
            context,
            _runtime: runtime,
            deadline,
            epoch,
            limits,
        })
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
        self.hooks[index].is_some()
    }

    /// Calls `hook` with `args` under the call budget; its answer as JSON (`None` for
    /// `undefined`).
    pub fn call(&self, index: usize, args: &[Arg<'_>]) -> Result<Option<serde_json::Value>, ScriptError> {
        let hook = HOOKS[index];
        let Some(f) = &self.hooks[index] else { return Ok(None) };
        self.arm(self.limits.call);
        let result = self.context.with(|ctx| self.call_in(&ctx, f, args));
        // The page's data is out of the scripts' reach once its call is over.
        self.current.borrow_mut().take();
        let timed_out = self.past_deadline();
        self.disarm();
        result.map_err(|e| match e {
            Failure::Thrown(_) if timed_out => ScriptError::Timeout { hook, budget: self.limits.call },
            Failure::Thrown(m) if m.contains("out of memory") => {
                ScriptError::OutOfMemory { hook, limit: self.limits.memory }
            }
            Failure::Thrown(message) => ScriptError::Thrown { hook, message },
            Failure::NotJson(got) => ScriptError::BadAnswer { hook, got, wanted: "JSON data" },
        })
    }

    fn call_in<'js>(
        &self,
        ctx: &Ctx<'js>,
        f: &Persistent<Function<'static>>,
        args: &[Arg<'_>],
    ) -> Result<Option<serde_json::Value>, Failure> {
        let thrown = |e: CaughtError<'_>| Failure::Thrown(message_of(&e));
        let f: Function = f.clone().restore(ctx).catch(ctx).map_err(thrown)?;
        let mut call = Args::new(ctx.clone(), args.len());
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
        let answer: Value = f.call_arg(call).catch(ctx).map_err(thrown)?;
        if answer.is_undefined() {
            return Ok(None);
        }
        if let Ok(data) = convert::from_js(&answer) {
            return Ok(data);
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
