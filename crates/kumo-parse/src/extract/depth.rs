//! How deeply a page's elements nest, measured in one pass before a DOM is built for it (the
//! tree builders take time quadratic in depth, and cannot be stopped once started).
//!
//! The tokenizing is the link scan's (`scan/`); of tree construction this keeps the stack of
//! open elements with the rules that close elements without an end tag (a `<p>` or `<li>` that
//! ends the previous one, `<td>` the previous cell, an end tag closing what it names while in
//! scope), so that sloppy but ordinary pages (a thousand unclosed `<li>`) measure as shallow as
//! the tree builder makes them. Where this differs from the tree builder it keeps elements open
//! rather than closing them: it may overstate a depth, not understate it much.

use std::collections::HashMap;

use memchr::memchr;

use super::fast::elements::{closes_p, is_heading, is_special, is_void};
use crate::scan::tag::{self, End};
use crate::scan::text;
use crate::scan::tree::{ForeignAttrs, Text, Tree};

/// Whether the elements of `input` nest deeper than `limit`. Linear in the input: the stack
/// never grows past `limit + 1`, and what each tag pops it had pushed.
pub(super) fn deeper_than(input: &[u8], limit: usize) -> bool {
    let mut d = Depth { stack: Vec::with_capacity(64), open: HashMap::new(), tree: Tree::default() };
    let mut i = 0;
    while let Some(at) = input.get(i..).and_then(|rest| memchr(b'<', rest)) {
        let lt = i + at;
        i = match input.get(lt + 1) {
            Some(b'!') => text::markup_declaration(input, lt + 2, d.tree.in_foreign()),
            Some(b'/') => d.end_tag(input, lt + 2),
            Some(b'?') => text::bogus_comment(input, lt + 1),
            Some(c) if c.is_ascii_alphabetic() => d.start_tag(input, lt + 1),
            _ => lt + 1,
        };
        if d.stack.len() > limit {
            return true;
        }
    }
    false
}

struct Depth {
    /// Names of the open elements, outermost first.
    stack: Vec<Vec<u8>>,
    /// How many of each name are open.
    open: HashMap<Vec<u8>, usize>,
    tree: Tree,
}

/// The lower-cased tag name from `from`, and where it ends (`tag::name` gives no name past a
/// length, and two long names must not pass for one).
fn read_name(input: &[u8], from: usize) -> (Vec<u8>, usize) {
    let rest = input.get(from..).unwrap_or_default();
    let len = rest.iter().position(|&c| tag::is_space(c) || c == b'/' || c == b'>').unwrap_or(rest.len());
    (rest[..len].to_ascii_lowercase(), from + len)
}

/// Elements that bound the default scope: an end tag does not close past them.
fn bounds_scope(name: &[u8]) -> bool {
    matches!(
        name,
        b"applet" | b"caption" | b"html" | b"table" | b"td" | b"th" | b"marquee" | b"object" | b"template"
    ) || matches!(name, b"svg" | b"math" | b"foreignobject" | b"desc" | b"title")
}

impl Depth {
    fn start_tag(&mut self, input: &[u8], from: usize) -> usize {
        let (name, after) = read_name(input, from);
        let Some(End { at, self_closing }) = tag::attributes::<0>(input, after, None) else {
            return input.len();
        };
        let foreign = self.tree.in_foreign();
        let mode = self.tree.start_tag(&name, self_closing, &ForeignAttrs::default());
        let pushes = !(is_void(&name)
            || matches!(name.as_slice(), b"html" | b"head" | b"body")
            || (self_closing && (foreign || matches!(name.as_slice(), b"svg" | b"math"))));
        if !foreign {
            self.implied_closes(&name);
        }
        if pushes {
            *self.open.entry(name.clone()).or_default() += 1;
            self.stack.push(name.clone());
        }
        match mode {
            Text::Data => at,
            Text::RawUntilEndTag => text::raw_text(input, at, &name),
            Text::Script => text::script(input, at),
            Text::Plain => input.len(),
        }
    }

    /// What a start tag named `name` closes before it opens.
    fn implied_closes(&mut self, name: &[u8]) {
        let item_scope = |n: &[u8]| is_special(n) && !matches!(n, b"address" | b"div" | b"p");
        if name == b"p" || closes_p(name) {
            self.close_in_scope(&[b"p"], |n| bounds_scope(n) || n == b"button");
        }
        match name {
            b"li" => self.close_in_scope(&[b"li"], item_scope),
            b"dd" | b"dt" => self.close_in_scope(&[b"dd", b"dt"], item_scope),
            b"td" | b"th" => self.close_in_scope(&[b"td", b"th"], |n| n == b"table"),
            b"tr" => self.close_in_scope(&[b"tr"], |n| n == b"table"),
            b"tbody" | b"thead" | b"tfoot" => {
                self.close_in_scope(&[b"tbody", b"thead", b"tfoot"], |n| n == b"table")
            }
            b"a" | b"nobr" | b"button" => self.close_in_scope(&[name], bounds_scope),
            b"option" | b"optgroup" if self.top_is(b"option") => self.pop(),
            _ if is_heading(name) && self.stack.last().is_some_and(|top| is_heading(top)) => self.pop(),
            _ => {}
        }
    }

    fn end_tag(&mut self, input: &[u8], from: usize) -> usize {
        match input.get(from) {
            Some(c) if c.is_ascii_alphabetic() => {
                let (name, after) = read_name(input, from);
                let Some(End { at, .. }) = tag::attributes::<0>(input, after, None) else {
                    return input.len();
                };
                self.tree.end_tag(&name);
                let table_scope = |n: &[u8]| matches!(n, b"html" | b"template" | b"table");
                match name.as_slice() {
                    b"table" => self.close_in_scope(&[b"table"], |n| matches!(n, b"html" | b"template")),
                    b"td" | b"th" | b"tr" | b"caption" | b"tbody" | b"thead" | b"tfoot" => {
                        self.close_in_scope(&[&name], table_scope)
                    }
                    _ => self.close_in_scope(&[&name], bounds_scope),
                }
                at
            }
            Some(b'>') => from + 1,
            Some(_) => text::bogus_comment(input, from),
            None => input.len(),
        }
    }

    /// Pops down to and including the innermost open element named one of `names`, unless an
    /// element `stop` holds for comes first.
    fn close_in_scope(&mut self, names: &[&[u8]], stop: impl Fn(&[u8]) -> bool) {
        // Most tags name nothing open: no need to look down the stack.
        if !names.iter().any(|n| self.open.get(*n).is_some_and(|&count| count > 0)) {
            return;
        }
        let target = |n: &[u8]| names.contains(&n);
        let Some(at) = self.stack.iter().rposition(|n| target(n) || stop(n)) else { return };
        if !target(&self.stack[at]) {
            return;
        }
        while self.stack.len() > at {
            self.pop();
        }
    }

    fn top_is(&self, name: &[u8]) -> bool {
        self.stack.last().is_some_and(|top| top == name)
    }

    fn pop(&mut self) {
        if let Some(name) = self.stack.pop()
            && let Some(count) = self.open.get_mut(&name)
        {
            *count = count.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn depth_over(html: &str, limit: usize) -> bool {
        deeper_than(html.as_bytes(), limit)
    }

    #[test]
    fn nested_elements_count() {
        let deep = format!("{}x{}", "<div>".repeat(600), "</div>".repeat(600));
        assert!(depth_over(&deep, 512));
        assert!(!depth_over(&deep, 600));
        let flat = "<div></div>".repeat(10_000);
        assert!(!depth_over(&flat, 1));
    }

    #[test]
    fn implied_ends_keep_sloppy_pages_shallow() {
        for page in [
            "<ul>".to_owned() + &"<li>x".repeat(2000) + "</ul>",
            "<p>a".repeat(2000),
            "<table>".to_owned() + &"<tr><td>a<td>b".repeat(2000) + "</table>",
            "<dl>".to_owned() + &"<dt>a<dd>b".repeat(2000) + "</dl>",
            "<select>".to_owned() + &"<option>a".repeat(2000) + "</select>",
            "<a href=x>a".repeat(2000),
            "<svg>".to_owned() + &"<path d=x />".repeat(2000) + "</svg>",
            "<br><img src=x><input>".repeat(2000),
            "<p><div>a</div>".repeat(2000),
            "<h1>a<h2>b".repeat(2000),
            "<script>".to_owned() + &"<div>".repeat(2000) + "</script>",
            "<!--".to_owned() + &"<div>".repeat(2000) + "-->",
        ] {
            assert!(!depth_over(&page, 16), "{}", &page[..60]);
        }
    }

    #[test]
    fn scope_boundaries_are_not_closed_through() {
        // An end tag for an element outside the table is ignored inside a cell: the tree builder
        // nests these four levels per round.
        let page = "<div><table><tr><td></div>".repeat(200);
        assert!(depth_over(&page, 512));
        let cells = "<table><tr><td>".repeat(200);
        assert!(depth_over(&cells, 512));
        let items = "<li><section>".repeat(300);
        assert!(depth_over(&items, 512));
    }
}
