//! A loaded script and its hooks. The script is data (its source, name and limits), cheap to
//! share; each thread that calls it runs its own sandbox, made from the source on its first
//! call (a QuickJS runtime belongs to one thread), and made again after one ran out of memory.
//! Sandboxes belong to one load of a script (its clones share them), never to its text: two
//! sites with the same script file share nothing.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use serde_json::Value;

use crate::sandbox::{Arg, Sandbox};
use crate::{Limits, Page, ScriptError};

/// The functions a script may define; each is optional.
pub const HOOKS: [&str; 5] = ["allow", "priority", "rewrite", "item", "extract"];

/// The most body text a page hands a script (longer bodies are cut).
pub const MAX_BODY: usize = 1 << 20;

/// Failed calls in a row after which a script is turned off for the rest of the crawl: a
/// script broken for every page would otherwise cost each page its whole budget.
pub const FAILURES_TO_DISABLE: u32 = 50;

thread_local! {
    /// This thread's sandboxes, by script, each with a token that dies with the script's
    /// last clone (its sandboxes are dropped then, when another is made).
    static SANDBOXES: RefCell<HashMap<u64, (Weak<AtomicU32>, Sandbox)>> = RefCell::new(HashMap::new());
}

/// The number of the next script loaded.
static LOADED: AtomicU64 = AtomicU64::new(0);

/// A spider's script: source, name (for errors), limits, and which hooks it defines.
#[derive(Debug, Clone)]
pub struct Script {
    id: u64,
    source: Arc<str>,
    file: Arc<str>,
    limits: Limits,
    defines: [bool; HOOKS.len()],
    /// Calls failed in a row, across threads; past [`FAILURES_TO_DISABLE`], no hook is called.
    failing: Arc<AtomicU32>,
}

/// What `rewrite` made of a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rewrite {
    /// As it was (the hook returned nothing, or the same URL).
    Keep,
    /// Not to be followed (`null` or `false`).
    Drop,
    /// Followed as this URL instead: the string the hook returned, as it returned it.
    To(String),
}

/// What `item` made of an item.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemAnswer {
    /// As it was (the hook returned nothing).
    Keep,
    /// Not kept (`null` or `false`).
    Drop,
    /// Replaced by the object the hook returned.
    Replace(serde_json::Map<String, Value>),
}

impl Script {
    /// Loads `source`, named `file` in errors: it is run once here, so a mistake in it is
    /// an error now, with its line and column.
    pub fn load(file: &str, source: &str, limits: Limits) -> Result<Script, ScriptError> {
        let sandbox = Sandbox::load(source, file, limits)?;
        let defines = std::array::from_fn(|i| sandbox.defines(i));
        let id = LOADED.fetch_add(1, Ordering::Relaxed);
        let failing = Arc::new(AtomicU32::new(0));
        let script = Script { id, source: source.into(), file: file.into(), limits, defines, failing };
        script.keep(sandbox);
        Ok(script)
    }

    /// Keeps `sandbox` as this thread's for this script, and drops those of scripts gone.
    fn keep(&self, sandbox: Sandbox) {
        SANDBOXES.with(|s| {
            let mut s = s.borrow_mut();
            s.retain(|_, (alive, _)| alive.strong_count() > 0);
            s.insert(self.id, (Arc::downgrade(&self.failing), sandbox));
        });
    }

    /// Whether the script defines `hook` (one of [`HOOKS`]) and is still on.
    pub fn defines(&self, hook: &str) -> bool {
        !self.disabled() && HOOKS.iter().position(|h| *h == hook).is_some_and(|i| self.defines[i])
    }

    /// Whether so many calls failed in a row that the script was turned off.
    pub fn disabled(&self) -> bool {
        self.failing.load(Ordering::Relaxed) >= FAILURES_TO_DISABLE
    }

    /// Each call's limits (after the operator's ceiling).
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// The file name errors give.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// Calls `hook` on this thread's sandbox (made now if this thread has none).
    fn call(&self, hook: &'static str, args: &[Arg<'_>]) -> Result<Option<Value>, ScriptError> {
        let index = HOOKS.iter().position(|h| *h == hook).expect("one of HOOKS");
        if !SANDBOXES.with(|s| s.borrow().contains_key(&self.id)) {
            self.keep(Sandbox::load(&self.source, &self.file, self.limits)?);
        }
        SANDBOXES.with(|s| {
            let mut s = s.borrow_mut();
            let (_, sandbox) = s.get(&self.id).expect("made above");
            let answer = sandbox.call(index, args);
            if sandbox.spent() {
                // A runtime left unfit (out of memory, jobs left) is not used again.
                s.remove(&self.id);
            }
            match &answer {
                Ok(_) => self.failing.store(0, Ordering::Relaxed),
                // Not the script's fault: kumo is ending.
                Err(ScriptError::Stopped { .. }) => {}
                Err(_) => {
                    if self.failing.fetch_add(1, Ordering::Relaxed) + 1 == FAILURES_TO_DISABLE {
                        return Err(ScriptError::Disabled { failures: FAILURES_TO_DISABLE });
                    }
                }
            }
            answer
        })
    }

    /// `allow(url, depth) -> bool`: whether a link is followed. `None` when not defined.
    pub fn allow(&self, url: &str, depth: u32) -> Result<Option<bool>, ScriptError> {
        if !self.defines("allow") {
            return Ok(None);
        }
        match self.call("allow", &[Arg::Str(url), Arg::Num(f64::from(depth))])? {
            None => Ok(Some(true)),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(other) => Err(bad("allow", &other, "true or false")),
        }
    }

    /// `priority(url, depth, referrer) -> int`: the request's priority. `None` when not
    /// defined or when it answers nothing.
    pub fn priority(
        &self,
        url: &str,
        depth: u32,
        referrer: Option<&str>,
    ) -> Result<Option<i64>, ScriptError> {
        if !self.defines("priority") {
            return Ok(None);
        }
        match self.call(
            "priority",
            &[Arg::Str(url), Arg::Num(f64::from(depth)), referrer.map_or(Arg::Null, Arg::Str)],
        )? {
            None => Ok(None),
            Some(Value::Number(n)) => n
                .as_f64()
                .map(|f| Some(f.round() as i64))
                .ok_or_else(|| bad("priority", &Value::Number(n), "a number")),
            Some(other) => Err(bad("priority", &other, "a number")),
        }
    }

    /// `rewrite(url) -> url | null`: the URL to follow instead, or none. Not defined: keep.
    pub fn rewrite(&self, url: &str) -> Result<Rewrite, ScriptError> {
        if !self.defines("rewrite") {
            return Ok(Rewrite::Keep);
        }
        match self.call("rewrite", &[Arg::Str(url)])? {
            None => Ok(Rewrite::Keep),
            Some(Value::Null | Value::Bool(false)) => Ok(Rewrite::Drop),
            Some(Value::String(s)) if s == url => Ok(Rewrite::Keep),
            Some(Value::String(s)) => Ok(Rewrite::To(s)),
            Some(other) => Err(bad("rewrite", &other, "a URL or null")),
        }
    }

    /// `item(item, page) -> item | null`: an item changed, or dropped. Not defined: keep.
    pub fn item(
        &self,
        item: &serde_json::Map<String, Value>,
        page: &Page,
    ) -> Result<ItemAnswer, ScriptError> {
        if !self.defines("item") {
            return Ok(ItemAnswer::Keep);
        }
        match self.call("item", &[Arg::Object(item), Arg::Page(page)])? {
            None => Ok(ItemAnswer::Keep),
            Some(Value::Null | Value::Bool(false)) => Ok(ItemAnswer::Drop),
            Some(Value::Object(o)) => Ok(ItemAnswer::Replace(o)),
            Some(other) => Err(bad("item", &other, "an object or null")),
        }
    }

    /// `extract(page) -> [items]`: items made from the page (an object is one item). `None`
    /// when not defined.
    pub fn extract(&self, page: &Page) -> Result<Option<Vec<serde_json::Map<String, Value>>>, ScriptError> {
        if !self.defines("extract") {
            return Ok(None);
        }
        let items = match self.call("extract", &[Arg::Page(page)])? {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(o)) => vec![o],
            Some(Value::Array(list)) => list
                .into_iter()
                .map(|v| match v {
                    Value::Object(o) => Ok(o),
                    other => Err(bad("extract", &other, "objects")),
                })
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(bad("extract", &other, "an array of objects")),
        };
        Ok(Some(items))
    }
}

/// The error for an answer of the wrong shape, with its first 80 bytes (cut at a character's
/// edge: a script's answer is any text).
fn bad(hook: &'static str, got: &Value, wanted: &'static str) -> ScriptError {
    let mut got = got.to_string();
    got.truncate(got.floor_char_boundary(80));
    ScriptError::BadAnswer { hook, got, wanted }
}
