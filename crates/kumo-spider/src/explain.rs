//! What a configured site does with one page, rule by rule (for `kumo parse`): which URL rules
//! match, what each model extracts, which links are followed and at what priority, and the
//! dig requests. It makes the same decisions as [`ConfigSpider`]'s analysis.

use kumo_core::{Item, Priority, Response};
use kumo_parse::extract::Document;
use serde::Serialize;

use crate::ConfigSpider;

/// A site's verdict on one page.
#[derive(Debug, Clone, Serialize)]
pub struct PageReport {
    /// The site's name.
    pub site: String,
    /// The page's URL (after redirects).
    pub url: String,
    /// The response's status code.
    pub status: u16,
    /// The response's `Content-Type`, if it has one.
    pub content_type: Option<String>,
    /// Whether the page is analyzed at all (a successful HTML or JSON response).
    pub analyzed: bool,
    /// Which of the site's URL rules match the page itself.
    pub rules: RuleMatches,
    /// Every model of the site, whether it applies here or not.
    pub models: Vec<ModelReport>,
    /// The next-page links found, rule `next_page`, or `deny` when `follow.deny` matches.
    pub next_page: Vec<LinkReport>,
    /// Every link on the page (or in the follow region), followed or not.
    pub links: Vec<LinkReport>,
    /// Requests from `dig` fields.
    pub dig: Vec<LinkReport>,
    /// With a `script`: what the page's analysis is after its hooks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script: Option<ScriptReport>,
}

/// What a site's script hooks made of a page's analysis.
#[derive(Debug, Clone, Serialize)]
pub struct ScriptReport {
    /// The script's file name.
    pub file: String,
    /// The hooks the script defines.
    pub hooks: Vec<&'static str>,
    /// The page's items after `extract` and `item` (with every model's).
    pub items: Vec<Item>,
    /// The requests after `rewrite`, `allow` and `priority` (the rules' links and the next
    /// page; dig requests included), rule `script`.
    pub requests: Vec<LinkReport>,
    /// Calls that failed.
    pub errors: Vec<String>,
}

/// Which of the site's URL rules match the page itself.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct RuleMatches {
    /// A target (item page): models run here. True for every page when no target is set.
    pub target: bool,
    /// A source (a page that leads to targets).
    pub source: bool,
    /// `follow.allow` matches.
    pub follow: bool,
    /// `follow.deny` matches.
    pub deny: bool,
}

/// One model on the page.
#[derive(Debug, Clone, Serialize)]
pub struct ModelReport {
    /// The model's name.
    pub name: String,
    /// Whether the model ran here (the page is a target and the model's `on` matches).
    pub applies: bool,
    /// The valid items it extracted (none where it does not apply).
    pub items: Vec<Item>,
    /// The items that lack a required value.
    pub invalid: Vec<InvalidReport>,
    /// What could not run on the page.
    pub issues: Vec<String>,
}

/// An item a required field left invalid.
#[derive(Debug, Clone, Serialize)]
pub struct InvalidReport {
    /// The item as far as it could be filled.
    pub item: Item,
    /// Dotted paths of the required fields without a value.
    pub missing: Vec<String>,
}

/// A link and what the rules make of it.
#[derive(Debug, Clone, Serialize)]
pub struct LinkReport {
    /// The link's absolute URL.
    pub url: String,
    /// The rule that decided: `target`, `source`, `follow`, `deny`, `next_page`, `dig` or
    /// `none` (no rule follows it).
    pub rule: &'static str,
    /// The request priority, `None` when the link is not followed.
    pub priority: Option<Priority>,
}

impl ConfigSpider {
    /// The rule that decides on a link, and the priority it gets (see `link_priority`).
    pub fn link_rule(&self, url: &str) -> (&'static str, Option<Priority>) {
        let rule = if self.deny.is_match(url) {
            "deny"
        } else if self.targets.is_match(url) {
            "target"
        } else if self.sources.is_match(url) {
            "source"
        } else if self.link_priority(url).is_some() {
            "follow"
        } else {
            "none"
        };
        (rule, self.link_priority(url))
    }

    /// Explains what the site does with `resp`.
    pub fn explain(&self, resp: &Response) -> PageReport {
        let here = resp.url.as_str();
        let is_json = resp.content_type().is_some_and(|c| c.contains("json"));
        let analyzed = resp.status.is_success() && (resp.is_html() || is_json);
        let is_target = self.targets.is_empty() || self.targets.is_match(here);
        let mut report = PageReport {
            site: self.name.clone(),
            url: here.to_string(),
            status: resp.status.as_u16(),
            content_type: resp.content_type().map(str::to_string),
            analyzed,
            rules: RuleMatches {
                target: is_target,
                source: self.sources.is_match(here),
                follow: self.allow.is_match(here),
                deny: self.deny.is_match(here),
            },
            models: Vec::new(),
            next_page: Vec::new(),
            links: Vec::new(),
            dig: Vec::new(),
            script: None,
        };
        if !analyzed {
            return report;
        }
        let body = resp.text();
        let doc = Document::new(&body, is_json, &resp.url);
        for m in &self.models {
            let applies = is_target && (m.on.is_empty() || m.on.is_match(here));
            let mut mr = ModelReport {
                name: m.model.name().to_string(),
                applies,
                items: Vec::new(),
                invalid: Vec::new(),
                issues: Vec::new(),
            };
            if applies {
                let found = m.model.extract_from(&doc);
                mr.items = found.items;
                mr.invalid = found
                    .invalid
                    .into_iter()
                    .map(|b| InvalidReport { item: b.item, missing: b.missing })
                    .collect();
                mr.issues = found.issues;
                report.dig.extend(found.dig.into_iter().map(|u| LinkReport {
                    url: u.to_string(),
                    rule: "dig",
                    priority: Some(self.priority.target),
                }));
            }
            report.models.push(mr);
        }
        if let Some(next) = &self.next_page {
            for url in next.extract_from(&doc).dig {
                let denied = self.deny.is_match(url.as_str());
                report.next_page.push(LinkReport {
                    url: url.to_string(),
                    rule: if denied { "deny" } else { "next_page" },
                    priority: (!denied).then_some(self.priority.next_page),
                });
            }
        }
        if resp.is_html() {
            let links = match &self.restrict {
                Some(region) => region.extract_from(&doc).dig,
                None => kumo_parse::extract_links(&resp.body, &resp.url, resp.encoding).links,
            };
            for url in links {
                let (rule, priority) = self.link_rule(url.as_str());
                report.links.push(LinkReport { url: url.to_string(), rule, priority });
            }
        }
        #[cfg(feature = "script")]
        if let Some(script) = &self.script {
            // The analysis itself, hooks applied: what the crawl would do with the page (each
            // link steered, as a crawl steers those its frontier does not know yet).
            let mut analysis = kumo_engine::Analyzer::analyze(self, resp);
            let mut failures = std::mem::take(&mut analysis.script_errors);
            analysis.requests.retain_mut(|r| kumo_engine::Analyzer::steer_link(self, resp, r, &mut failures));
            analysis.script_errors = failures;
            report.script = Some(ScriptReport {
                file: script.file().to_string(),
                hooks: kumo_script::HOOKS.into_iter().filter(|h| script.defines(h)).collect(),
                items: analysis.items,
                requests: analysis
                    .requests
                    .iter()
                    .map(|r| LinkReport {
                        url: r.url.to_string(),
                        rule: "script",
                        priority: Some(r.priority),
                    })
                    .collect(),
                errors: analysis.script_errors.into_iter().map(|f| f.message).collect(),
            });
        }
        report
    }
}
