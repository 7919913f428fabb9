//! The analyzer of a configured site: models on target pages, links followed by rule with
//! Spiderman's priorities (item pages first), the next-page link, and `dig` fields.

use kumo_core::{Item, Priority, Response, Url};
use kumo_engine::{Analysis, Analyzer};
use kumo_parse::extract::Document;
use kumo_parse::{CompiledModel, Extraction};

use crate::rules::UrlRules;

/// One model of a site and the target pages it applies to (all of them when `on` is empty).
#[derive(Debug, Clone)]
pub struct SiteModel {
    /// The model; its name tags its items (`_model`).
    pub model: CompiledModel,
    /// Regexes of the target pages it runs on; empty: every target page.
    pub on: UrlRules,
    /// The model's top-level field names, in order (CSV columns).
    pub fields: Vec<String>,
}

/// The request priority of each kind of link (higher is fetched first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Priorities {
    /// Links to target pages, and `dig` values.
    pub target: Priority,
    /// Links to source pages (those that lead to targets).
    pub source: Priority,
    /// The next-page link.
    pub next_page: Priority,
    /// Other links followed (`follow.allow`, or every link when no rule is set).
    pub follow: Priority,
}

/// A site from a spider file, as an [`Analyzer`].
///
/// On every successful HTML (or JSON) page: when the URL is a target (every page is one when
/// `targets` is empty), each model whose `on`
/// matches runs and its items are tagged `_model`; `dig` values become requests. Links (all of
/// them, or only those inside `follow.restrict_css`) are followed when they are targets,
/// sources or match `follow.allow` — or, with none of the three set, all of them — and never
/// when they match `follow.deny`. The next-page link is followed unless it matches
/// `follow.deny`; `dig` values are followed whatever they match.
#[derive(Debug, Clone)]
pub struct ConfigSpider {
    /// The site's name.
    pub name: String,
    /// Regexes of the pages that hold items: models run only there (everywhere when empty).
    pub targets: UrlRules,
    /// Regexes of the pages that lead to targets.
    pub sources: UrlRules,
    /// Regexes of other links to follow (`follow.allow`).
    pub allow: UrlRules,
    /// Regexes of links never followed (`follow.deny`), the next-page link included; `dig`
    /// values are followed whatever they match.
    pub deny: UrlRules,
    /// Takes the links inside the follow region (`follow.restrict_css`).
    pub restrict: Option<CompiledModel>,
    /// Takes the next-page link.
    pub next_page: Option<CompiledModel>,
    /// The site's models, in file order.
    pub models: Vec<SiteModel>,
    /// The request priority of each kind of link.
    pub priority: Priorities,
    /// The site's JavaScript hooks (`script`), run sandboxed over each page's analysis.
    #[cfg(feature = "script")]
    pub script: Option<kumo_script::Script>,
}

impl ConfigSpider {
    /// The priority of a link, or `None` when the rules do not follow it.
    pub fn link_priority(&self, url: &str) -> Option<Priority> {
        if self.deny.is_match(url) {
            return None;
        }
        if self.targets.is_match(url) {
            Some(self.priority.target)
        } else if self.sources.is_match(url) {
            Some(self.priority.source)
        } else if self.allow.is_match(url)
            || (self.allow.is_empty() && self.targets.is_empty() && self.sources.is_empty())
        {
            Some(self.priority.follow)
        } else {
            None
        }
    }

    fn push(&self, out: &mut Analysis, resp: &Response, url: Url, priority: Option<Priority>) {
        if let Some(p) = priority {
            out.requests.push(resp.request.follow(url).with_priority(p));
        }
    }
}

impl Analyzer for ConfigSpider {
    fn analyze(&self, resp: &Response) -> Analysis {
        let mut out = Analysis::default();
        let is_json = resp.content_type().is_some_and(|c| c.contains("json"));
        if !resp.status.is_success() || !(resp.is_html() || is_json) {
            return out;
        }
        let body = resp.text();
        let doc = Document::new(&body, is_json, &resp.url);
        let here = resp.url.as_str();

        if self.targets.is_empty() || self.targets.is_match(here) {
            for m in &self.models {
                if !m.on.is_empty() && !m.on.is_match(here) {
                    continue;
                }
                let found = m.model.extract_from(&doc);
                if failed(&mut out, here, m.model.name(), &found) {
                    break;
                }
                for item in found.items {
                    out.items.push(tag(m.model.name(), item));
                }
                for bad in found.invalid {
                    out.issues.push(format!(
                        "{here}: {} item lacks {}",
                        m.model.name(),
                        bad.missing.join(", ")
                    ));
                }
                for url in found.dig {
                    out.requests.push(resp.request.follow(url).with_priority(self.priority.target));
                }
                out.issues.extend(found.issues);
            }
        }

        if let Some(next) = &self.next_page {
            let found = next.extract_from(&doc);
            failed(&mut out, here, "next_page", &found);
            for url in found.dig {
                let p = (!self.deny.is_match(url.as_str())).then_some(self.priority.next_page);
                self.push(&mut out, resp, url, p);
            }
        }

        if resp.is_html() {
            let links = match &self.restrict {
                Some(region) => {
                    let found = region.extract_from(&doc);
                    failed(&mut out, here, "follow.restrict_css", &found);
                    found.dig
                }
                None => {
                    let page = kumo_parse::extract_links(&resp.body, &resp.url, resp.encoding);
                    out.issues.extend(page.issues);
                    page.links
                }
            };
            for url in links {
                let p = self.link_priority(url.as_str());
                self.push(&mut out, resp, url, p);
            }
        }
        #[cfg(feature = "script")]
        if let Some(script) = &self.script {
            crate::scripted::apply(script, resp, &body, &mut out);
        }
        out
    }

    #[cfg(feature = "script")]
    fn steers_links(&self) -> bool {
        self.script.as_ref().is_some_and(crate::scripted::steers)
    }

    #[cfg(feature = "script")]
    fn steer_link(
        &self,
        resp: &Response,
        link: &mut kumo_core::Request,
        failures: &mut Vec<kumo_engine::ScriptFailure>,
    ) -> bool {
        match &self.script {
            Some(script) => crate::scripted::steer(script, resp, link, failures),
            None => true,
        }
    }
}

/// Whether `found` failed the page as a whole (too deep, over its time budget): the failure is
/// recorded once for the page, which the engine then fails as `extract`, and the crawl goes on.
fn failed(out: &mut Analysis, here: &str, model: &str, found: &Extraction) -> bool {
    let Some(failure) = &found.failure else { return false };
    if out.extract_errors.is_empty() {
        out.extract_errors.push(format!("{here}: model {model}: {failure}"));
    }
    true
}

/// Puts `_model` first, so mixed outputs say what each record is.
pub(crate) fn tag(model: &str, item: Item) -> Item {
    let mut tagged = Item::new().with("_model", model);
    tagged.0.extend(item.0);
    tagged
}
