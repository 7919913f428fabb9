//! One pass over a page that keeps the stack of open elements html5ever's tree builder would
//! build, and records which elements the plan's selectors match and what they hold.
//!
//! A stack can follow the tree builder only while the page is well formed enough: every end
//! tag closes the element on top, nothing is closed or reopened implicitly, tables hold only
//! their own structure (the `<tbody>` a bare `<tr>` implies is opened as the tree builder
//! does), no select, template, frameset, SVG or MathML. The walk checks each of those as it
//! goes and gives up ([`NeedsDom`]) at the first thing a stack cannot follow, so the DOM
//! decides those pages.
//! Tokenizing follows the link scan (`scan/`), with scripting on as scraper parses (so
//! `<noscript>` holds raw text). Quirks mode changes nothing the walk follows: scraper matches
//! class and id selectors case-sensitively in every mode, and the one tree-building rule that
//! differs (`<table>` closing a `<p>`) never comes up: an open `<p>` before a `<table>` sends the
//! page to the DOM either way.

use std::borrow::Cow;
use std::ops::Range;

use memchr::memchr;

use super::super::limits::{Budget, ExtractError, MAX_DEPTH, MAX_VALUE_BYTES};
use super::elements::{closes_p, is_heading, is_special, is_void};
use super::selector::{Alternative, Compound, attr_holds, has_class};
use crate::entities::{self, Context};
use crate::scan::tag::{self, is_space};
use crate::scan::text;

/// The page needs the DOM: something in it is beyond what the walk follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct NeedsDom;

/// Why a walk gave no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Stop {
    NeedsDom,
    /// The page is past a limit: no model runs on it.
    Failed(ExtractError),
}

/// What one selector list wants from the elements it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Want {
    /// The element itself (a root: its extent).
    Element,
    /// Its text content.
    Text,
    /// The value of this attribute (lower-case name).
    Attr(Box<[u8]>),
}

/// A selector list to run.
#[derive(Debug, Clone)]
pub(super) struct Target {
    pub(super) alternatives: Vec<Alternative>,
    pub(super) want: Want,
}

/// Everything the walk needs to know, built once per model.
#[derive(Debug, Clone)]
pub(super) struct Plan {
    /// At most 64: each is one bit of an element's match set.
    pub(super) compounds: Vec<Compound>,
    pub(super) targets: Vec<Target>,
    /// Lower-case names of every attribute a compound tests or a target takes (`id`, `class`
    /// included when used).
    pub(super) attributes: Vec<Box<[u8]>>,
}

/// One element a target matched.
#[derive(Debug, Clone)]
pub(super) struct Hit {
    /// The element's number in document order.
    pub(super) element: u32,
    /// One past the number of its last descendant.
    pub(super) end: u32,
    /// What the target wants of it (`None` for an absent attribute, or for `Element`).
    pub(super) value: Option<String>,
}

/// What the walk found: each target's hits in document order, and the first `<base href>`.
#[derive(Debug, Clone, Default)]
pub(super) struct Walked {
    pub(super) hits: Vec<Vec<Hit>>,
    pub(super) base: Option<String>,
}

/// Walks `page` with `plan`, within the page's time `budget`.
pub(super) fn walk(plan: &Plan, page: &str, budget: &Budget) -> Result<Walked, Stop> {
    let input = page.as_bytes();
    if memchr(0, input).is_some() {
        // NUL is dropped in some places and replaced in others: not worth following.
        return Err(Stop::NeedsDom);
    }
    let mut w = Walker {
        plan,
        page,
        input,
        out: Walked { hits: vec![Vec::new(); plan.targets.len()], base: None },
        stack: Vec::with_capacity(32),
        names: Vec::with_capacity(256),
        open_hits: Vec::new(),
        texts: Vec::new(),
        next_element: 0,
        form_open: false,
        name: Vec::with_capacity(16),
        slots: vec![None; plan.attributes.len()],
        relevant: false,
        untyped: plan.compounds.iter().any(|c| c.tag.is_none()),
        counts: [0; 4],
        collected: 0,
        failed: None,
    };
    let walked = w.run(budget);
    match (walked, w.failed) {
        (_, Some(e)) => Err(Stop::Failed(e)),
        (Ok(()), None) => Ok(w.out),
        (Err(NeedsDom), None) => Err(Stop::NeedsDom),
    }
}

impl Walker<'_, '_> {
    /// The main loop: tags and the text between them.
    fn run(&mut self, budget: &Budget) -> Result<(), NeedsDom> {
        let input = self.input;
        let w = self;
        let mut i = 0;
        let mut text_from = i;
        let mut tags = 0u32;
        while let Some(at) = memchr(b'<', &input[i..]) {
            let lt = i + at;
            tags = tags.wrapping_add(1);
            if tags.is_multiple_of(1024)
                && let Err(e) = budget.check()
            {
                return w.fail(e);
            }
            let starts_markup = match input.get(lt + 1) {
                Some(b'!' | b'?' | b'/') => true,
                Some(c) => c.is_ascii_alphabetic(),
                None => false,
            };
            if !starts_markup {
                // A `<` that starts nothing is text.
                i = lt + 1;
                continue;
            }
            w.text(text_from..lt, Context::Text)?;
            i = match input[lt + 1] {
                b'!' => text::markup_declaration(input, lt + 2, false),
                b'?' => text::bogus_comment(input, lt + 1),
                b'/' => match input.get(lt + 2) {
                    Some(c) if c.is_ascii_alphabetic() => w.end_tag(lt + 2)?,
                    Some(b'>') => lt + 3,
                    Some(_) => text::bogus_comment(input, lt + 2),
                    // `</` at the very end is text.
                    None => return Err(NeedsDom),
                },
                // A start tag; a raw-text element's content is taken as text there.
                _ => w.start_tag(lt + 1)?,
            };
            text_from = i;
        }
        w.text(text_from..input.len(), Context::Text)?;
        while !w.stack.is_empty() {
            w.pop();
        }
        Ok(())
    }
}

/// An open element.
struct Open {
    /// Its lower-case name, in `Walker::names`.
    name: Range<usize>,
    /// The plan's states it holds (see [`Alternative`]).
    states: u128,
    /// The states it and its ancestors hold.
    below: u128,
    /// Where its hits start in `Walker::open_hits`.
    hits_from: usize,
    /// Whether its text is being collected (the top of `Walker::texts`).
    collects: bool,
    /// Opened by the tree builder without a tag (a `<tbody>`).
    implied: bool,
}

/// The parts of a table's structure, where only certain tags may come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InTable {
    Table,
    /// `<tbody>`, `<thead>` or `<tfoot>`.
    Section,
    Row,
    /// `<colgroup>`.
    Columns,
}

struct Walker<'p, 'i> {
    plan: &'p Plan,
    /// The page, and the same as bytes.
    page: &'i str,
    input: &'i [u8],
    out: Walked,
    stack: Vec<Open>,
    /// The names of the open elements, end to end.
    names: Vec<u8>,
    /// Hits of open elements whose extent or text is not known yet: (target, index).
    open_hits: Vec<(usize, usize)>,
    /// Text collected for open elements that a target wants the text of, outermost first.
    texts: Vec<String>,
    next_element: u32,
    /// The tree builder's form element pointer is set: a second `<form>` would be ignored.
    form_open: bool,
    /// The current tag's lower-case name.
    name: Vec<u8>,
    /// The current tag's values of the plan's attributes (first occurrence wins), read only
    /// when `relevant`.
    slots: Vec<Option<Range<usize>>>,
    /// The current tag could match some compound.
    relevant: bool,
    /// Some compound names no element (`.x`, `[href]`): every tag could match.
    untyped: bool,
    /// How many `p`, `a`, `nobr` and `button` elements are open (see `counted`).
    counts: [u32; 4],
    /// Bytes of text collected so far, over every collecting element.
    collected: usize,
    /// The page is past a limit (the walk then stops with `NeedsDom` to unwind).
    failed: Option<ExtractError>,
}

/// The slot in `Walker::counts` of the elements whose presence on the stack the walk asks
/// about, so that asking does not look down the stack (which grew quadratic with depth).
fn counted(name: &[u8]) -> Option<usize> {
    match name {
        b"p" => Some(0),
        b"a" => Some(1),
        b"nobr" => Some(2),
        b"button" => Some(3),
        _ => None,
    }
}

impl<'i> Walker<'_, 'i> {
    /// Records why the page fails, and unwinds the walk.
    fn fail<T>(&mut self, error: ExtractError) -> Result<T, NeedsDom> {
        self.failed.get_or_insert(error);
        Err(NeedsDom)
    }

    /// A start tag whose name begins at `from`; returns where reading goes on.
    fn start_tag(&mut self, from: usize) -> Result<usize, NeedsDom> {
        let input = self.input;
        let name_end = self.read_name(from);
        self.slots.iter_mut().for_each(|s| *s = None);
        // Most tags can match no compound: their attributes need not be looked at.
        self.relevant = self.could_match(&self.name);
        let (relevant, is_base) = (self.relevant, self.name == b"base");
        let mut base_href = None;
        let (plan, slots) = (self.plan, &mut self.slots);
        let end = tag::each_attribute(input, name_end, |name, value| {
            if relevant {
                for (wanted, slot) in plan.attributes.iter().zip(slots.iter_mut()) {
                    if slot.is_none() && name.eq_ignore_ascii_case(wanted) {
                        *slot = Some(value.clone());
                        break;
                    }
                }
            }
            if is_base && base_href.is_none() && name.eq_ignore_ascii_case(b"href") {
                base_href = Some(value);
            }
        });
        let Some(end) = end else {
            // A tag cut off by the end of the page is dropped, and nothing follows it.
            return Ok(input.len());
        };
        let name = std::mem::take(&mut self.name);
        let result = self.element(&name, end.at, base_href);
        self.name = name;
        result
    }

    fn element(
        &mut self,
        name: &[u8],
        at: usize,
        base_href: Option<Range<usize>>,
    ) -> Result<usize, NeedsDom> {
        // Inside a table's structure only its own parts may come, each where it belongs; the
        // tree builder moves anything else out in front of the table.
        if let Some(context) = self.table_context() {
            match (context, name) {
                (_, b"script" | b"style")
                | (InTable::Table, b"caption" | b"colgroup" | b"tbody" | b"thead" | b"tfoot")
                | (InTable::Section, b"tr")
                | (InTable::Row, b"td" | b"th")
                | (InTable::Columns, b"col") => {}
                // A row straight in the table gets the `<tbody>` the tree builder makes for it.
                (InTable::Table, b"tr") => self.open_implied_tbody()?,
                _ => return Err(NeedsDom),
            }
            return self.insert(name, at, base_href, false);
        }
        match name {
            // Never on the stack; their attributes are merged into the one element, so any the
            // selectors look at would need the DOM.
            b"html" | b"head" | b"body" => {
                return if self.touches_any_compound()? { Err(NeedsDom) } else { Ok(at) };
            }
            b"frameset" | b"template" | b"svg" | b"math" | b"caption" | b"col" | b"colgroup" | b"frame"
            | b"tbody" | b"td" | b"tfoot" | b"th" | b"thead" | b"tr" | b"select" | b"rb" | b"rp" | b"rt"
            | b"rtc" | b"image" | b"plaintext" | b"isindex" | b"search" => {
                return Err(NeedsDom);
            }
            b"a" | b"nobr" | b"button" if self.is_open(name) => return Err(NeedsDom),
            b"form" if self.form_open => return Err(NeedsDom),
            b"option" | b"optgroup" if self.top_is(|n| n == b"option") => return Err(NeedsDom),
            b"li" if self.closes_list_item(|n| n == b"li") => return Err(NeedsDom),
            b"dd" | b"dt" if self.closes_list_item(|n| n == b"dd" || n == b"dt") => return Err(NeedsDom),
            b"h1" | b"h2" | b"h3" | b"h4" | b"h5" | b"h6" if self.top_is(is_heading) => {
                return Err(NeedsDom);
            }
            _ => {}
        }
        if closes_p(name) && self.is_open(b"p") {
            return Err(NeedsDom);
        }
        self.insert(name, at, base_href, false)
    }

    /// The `<tbody>` the tree builder inserts for a `<tr>` written straight inside `<table>`: an
    /// element without attributes.
    fn open_implied_tbody(&mut self) -> Result<(), NeedsDom> {
        let tag_slots = std::mem::replace(&mut self.slots, vec![None; self.plan.attributes.len()]);
        let tbody_relevant = self.could_match(b"tbody");
        let tag_relevant = std::mem::replace(&mut self.relevant, tbody_relevant);
        let opened = self.insert(b"tbody", 0, None, true);
        self.slots = tag_slots;
        self.relevant = tag_relevant;
        opened.map(|_| ())
    }

    /// Which part of a table's structure the current node is, if it is one.
    fn table_context(&self) -> Option<InTable> {
        let top = self.stack.last()?;
        match &self.names[top.name.clone()] {
            b"table" => Some(InTable::Table),
            b"tbody" | b"thead" | b"tfoot" => Some(InTable::Section),
            b"tr" => Some(InTable::Row),
            b"colgroup" => Some(InTable::Columns),
            _ => None,
        }
    }

    /// Inserts the element the current tag (or, `implied`, the tree builder) opens: records
    /// what the targets match, pushes it unless it is void, and reads the raw text of a
    /// raw-text element.
    fn insert(
        &mut self,
        name: &[u8],
        at: usize,
        base_href: Option<Range<usize>>,
        implied: bool,
    ) -> Result<usize, NeedsDom> {
        if name == b"base"
            && self.out.base.is_none()
            && let Some(href) = base_href
        {
            self.out.base = Some(decoded(self.page, href, Context::Attribute)?.into_owned());
        }
        let bits = if self.relevant { self.match_bits(name)? } else { 0 };
        let element = self.next_element;
        self.next_element += 1;
        let hits_from = self.open_hits.len();
        let mut wants_text = false;
        let (parent, above) = self.stack.last().map_or((0, 0), |open| (open.states, open.below));
        let mut states = 0u128;
        // A target matches only where its subject compound does.
        let targets = if bits == 0 { &[][..] } else { &self.plan.targets[..] };
        for (t, target) in targets.iter().enumerate() {
            let mut subject = false;
            for alternative in &target.alternatives {
                let (matched, held) = alternative.step(bits, parent, above);
                subject |= matched;
                states |= held;
            }
            if !subject {
                continue;
            }
            let value = match &target.want {
                Want::Element => None,
                Want::Text => {
                    wants_text = true;
                    None
                }
                Want::Attr(attr) => self.attribute(attr)?.map(|v| v.trim().to_owned()),
            };
            self.open_hits.push((t, self.out.hits[t].len()));
            self.out.hits[t].push(Hit { element, end: element + 1, value });
        }
        if is_void(name) {
            // No content: its hits are complete (an empty text is no value).
            self.close_hits(hits_from, String::new());
            return Ok(at);
        }
        if name == b"form" {
            self.form_open = true;
        }
        if self.stack.len() >= MAX_DEPTH {
            return self.fail(ExtractError::TooDeep { limit: MAX_DEPTH });
        }
        if let Some(slot) = counted(name) {
            self.counts[slot] += 1;
        }
        let start = self.names.len();
        self.names.extend_from_slice(name);
        if wants_text {
            self.texts.push(String::new());
        }
        self.stack.push(Open {
            name: start..self.names.len(),
            states,
            below: above | states,
            hits_from,
            collects: wants_text,
            implied,
        });
        // Raw text up to the element's own end tag, which the main loop then reads.
        if implied {
            return Ok(at);
        }
        let input = self.input;
        let content_end = match name {
            b"script" => text::script(input, at),
            b"title" | b"textarea" => {
                let end = text::raw_text(input, at, name);
                self.text(at..end, Context::Text)?;
                return Ok(end);
            }
            b"style" | b"xmp" | b"iframe" | b"noembed" | b"noframes" | b"noscript" => {
                text::raw_text(input, at, name)
            }
            _ => return Ok(at),
        };
        self.raw(at..content_end)?;
        Ok(content_end)
    }

    /// An end tag whose name begins at `from`.
    fn end_tag(&mut self, from: usize) -> Result<usize, NeedsDom> {
        let name_end = self.read_name(from);
        let Some(end) = tag::each_attribute(self.input, name_end, |_, _| {}) else {
            return Ok(self.input.len());
        };
        match self.name.as_slice() {
            // The stack does not hold them, and closing them changes nothing it holds.
            b"html" | b"head" | b"body" => return Ok(end.at),
            // `</br>` is a `<br>`, `</p>` without a `<p>` makes one: elements a stack never saw.
            _ => {}
        }
        // `</table>` also closes the `<tbody>` the tree builder opened on its own.
        if self.name == b"table" && self.stack.last().is_some_and(|top| top.implied) {
            self.pop();
        }
        let on_top = self.stack.last().is_some_and(|top| self.names[top.name.clone()] == *self.name);
        if !on_top {
            return Err(NeedsDom);
        }
        if self.name == b"form" {
            self.form_open = false;
        }
        self.pop();
        Ok(end.at)
    }

    /// Reads a tag name from `from` into `self.name`, lower-cased; returns where it ends.
    fn read_name(&mut self, from: usize) -> usize {
        let rest = &self.input[from..];
        let len = rest.iter().position(|&c| is_space(c) || c == b'/' || c == b'>').unwrap_or(rest.len());
        self.name.clear();
        self.name.extend(rest[..len].iter().map(u8::to_ascii_lowercase));
        from + len
    }

    fn pop(&mut self) {
        let Some(open) = self.stack.pop() else { return };
        if let Some(slot) = counted(&self.names[open.name.clone()]) {
            self.counts[slot] -= 1;
        }
        self.names.truncate(open.name.start);
        let text = if open.collects { self.texts.pop().unwrap_or_default() } else { String::new() };
        self.close_hits(open.hits_from, text);
    }

    /// Completes the hits from `from` on: their extent ends here, text takes get `text`.
    fn close_hits(&mut self, from: usize, text: String) {
        let end = self.next_element;
        for (t, index) in self.open_hits.drain(from..) {
            let hit = &mut self.out.hits[t][index];
            hit.end = end;
            if self.plan.targets[t].want == Want::Text {
                hit.value = Some(text.clone());
            }
        }
    }

    /// Text between tags (`Context::Text` decodes references) for every element collecting.
    fn text(&mut self, range: Range<usize>, context: Context) -> Result<(), NeedsDom> {
        if range.is_empty() {
            return Ok(());
        }
        // Text other than whitespace in a table's structure is moved out in front of the table.
        if self.table_context().is_some() && !self.input[range.clone()].iter().all(|&c| is_space(c)) {
            return Err(NeedsDom);
        }
        if self.texts.is_empty() {
            return Ok(());
        }
        let decoded = decoded(self.page, range, context)?;
        self.collect(&decoded)
    }

    /// Raw text (no references) for every element collecting.
    fn raw(&mut self, range: Range<usize>) -> Result<(), NeedsDom> {
        if self.texts.is_empty() || range.is_empty() {
            return Ok(());
        }
        let page = self.page;
        self.collect(page.get(range).unwrap_or_default())
    }

    /// Adds `text` to every element collecting, within [`MAX_VALUE_BYTES`] in all: each of
    /// them holds it, so nested matches multiply what a page's text costs.
    fn collect(&mut self, text: &str) -> Result<(), NeedsDom> {
        self.collected = self.collected.saturating_add(text.len().saturating_mul(self.texts.len()));
        if self.collected > MAX_VALUE_BYTES {
            return self.fail(ExtractError::TooLarge { limit: MAX_VALUE_BYTES });
        }
        for collecting in &mut self.texts {
            collecting.push_str(text);
        }
        Ok(())
    }

    /// The current tag's value of `attr`, decoded; `None` when it has no such attribute.
    fn attribute(&self, attr: &[u8]) -> Result<Option<Cow<'i, str>>, NeedsDom> {
        let slot = self.plan.attributes.iter().position(|a| **a == *attr).and_then(|i| self.slots[i].clone());
        slot.map(|range| decoded(self.page, range, Context::Attribute)).transpose()
    }

    /// The compounds the current tag matches, one bit each.
    fn match_bits(&self, name: &[u8]) -> Result<u64, NeedsDom> {
        let mut bits = 0u64;
        // `None` without a read when no compound tests them (the plan lists no such attribute).
        let id = self.attribute(b"id")?;
        let class = self.attribute(b"class")?;
        for (bit, c) in self.plan.compounds.iter().enumerate() {
            if c.tag.as_deref().is_some_and(|t| t != name) {
                continue;
            }
            if c.id.as_deref().is_some_and(|want| id.as_deref().map(str::as_bytes) != Some(want)) {
                continue;
            }
            if !c.classes.iter().all(|want| has_class(class.as_deref(), want)) {
                continue;
            }
            let mut attrs_hold = true;
            for test in &c.attrs {
                attrs_hold &= attr_holds(&test.value, self.attribute(&test.name)?.as_deref());
            }
            if attrs_hold {
                bits |= 1 << bit;
            }
        }
        Ok(bits)
    }

    /// Whether any one test of any compound (an id, a class, an attribute) holds for the
    /// current tag: for `<html>`, `<head>` and `<body>`, whose attributes from several tags end
    /// up on one element.
    fn touches_any_compound(&self) -> Result<bool, NeedsDom> {
        if !self.untyped {
            // Every compound names an element other than these three.
            return Ok(false);
        }
        let id = self.attribute(b"id")?;
        let class = self.attribute(b"class")?;
        for c in self.plan.compounds.iter().filter(|c| c.tag.is_none()) {
            if c.id.as_deref().is_some_and(|want| id.as_deref().map(str::as_bytes) == Some(want)) {
                return Ok(true);
            }
            if c.classes.iter().any(|want| has_class(class.as_deref(), want)) {
                return Ok(true);
            }
            for test in &c.attrs {
                if attr_holds(&test.value, self.attribute(&test.name)?.as_deref()) {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Whether an element named `name` could match some compound.
    fn could_match(&self, name: &[u8]) -> bool {
        self.untyped || self.plan.compounds.iter().any(|c| c.tag.as_deref() == Some(name))
    }

    fn is_open(&self, name: &[u8]) -> bool {
        match counted(name) {
            Some(slot) => self.counts[slot] > 0,
            None => self.stack.iter().any(|open| self.names[open.name.clone()] == *name),
        }
    }

    fn top_is(&self, test: impl Fn(&[u8]) -> bool) -> bool {
        self.stack.last().is_some_and(|top| test(&self.names[top.name.clone()]))
    }

    /// Whether a new `<li>` (or `<dd>`/`<dt>`) would close an open one: the tree builder looks
    /// down the stack for one, stopping at special elements other than address, div and p.
    fn closes_list_item(&self, is_item: impl Fn(&[u8]) -> bool) -> bool {
        for open in self.stack.iter().rev() {
            let name = &self.names[open.name.clone()];
            if is_item(name) {
                return true;
            }
            if is_special(name) && !matches!(name, b"address" | b"div" | b"p") {
                return false;
            }
        }
        false
    }
}

/// `page[range]` with references decoded and line breaks normalized as the tokenizer's input
/// stream does (CR LF and lone CR become LF).
fn decoded(page: &str, range: Range<usize>, context: Context) -> Result<Cow<'_, str>, NeedsDom> {
    // Ranges start and end at ASCII bytes, so at character boundaries.
    let raw = page.get(range).ok_or(NeedsDom)?;
    let raw: Cow<'_, str> = if raw.contains('\r') {
        Cow::Owned(raw.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(raw)
    };
    if !raw.contains('&') {
        return Ok(raw);
    }
    let mut out = String::with_capacity(raw.len());
    entities::decode_exact(&raw, context, &mut out).map_err(|_| NeedsDom)?;
    Ok(Cow::Owned(out))
}
