//! A spider file error that names the file, the line and the field.

use std::fmt;

/// A spider file that cannot run: where (line and column, 1-based) and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct SpiderConfigError {
    /// The file's name, as given to the loader.
    pub file: String,
    /// The line, from 1 (1 too when the check cannot place the mistake).
    pub line: usize,
    /// The column in characters, from 1.
    pub column: usize,
    /// The setting's path (`site "quotes" → model[0]`), when the check knows it; TOML syntax
    /// and unknown-field errors name the field in the message.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SpiderConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: ", self.file, self.line, self.column)?;
        if let Some(field) = &self.field {
            write!(f, "{field}: ")?;
        }
        f.write_str(&self.message)
    }
}

/// Turns byte offsets into line and column numbers.
pub(super) struct Lines<'a> {
    pub file: &'a str,
    pub text: &'a str,
}

impl Lines<'_> {
    pub fn at(&self, offset: usize) -> (usize, usize) {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, column)
    }

    pub fn error(
        &self,
        offset: usize,
        field: impl Into<String>,
        message: impl fmt::Display,
    ) -> SpiderConfigError {
        let (line, column) = self.at(offset);
        SpiderConfigError {
            file: self.file.to_string(),
            line,
            column,
            field: Some(field.into()),
            message: message.to_string(),
        }
    }

    /// Where `key` is written: in the `site`th `[[site]]` table, or at the top of the file;
    /// 0 when it is not found there.
    pub fn key(&self, site: Option<usize>, key: &str) -> usize {
        use toml::de::{DeTable, DeValue};
        let Ok(root) = DeTable::parse(self.text) else { return 0 };
        let root = root.get_ref();
        let table = match site {
            None => Some(root),
            Some(i) => root
                .iter()
                .find(|(k, _)| k.get_ref() == "site")
                .and_then(|(_, v)| match v.get_ref() {
                    DeValue::Array(sites) => sites.get(i),
                    _ => None,
                })
                .and_then(|t| match t.get_ref() {
                    DeValue::Table(t) => Some(t),
                    _ => None,
                }),
        };
        table.and_then(|t| t.iter().find(|(k, _)| k.get_ref() == key)).map_or(0, |(k, _)| k.span().start)
    }

    pub fn toml(&self, e: &toml::de::Error) -> SpiderConfigError {
        let (line, column) = e.span().map_or((1, 1), |s| self.at(s.start));
        SpiderConfigError {
            file: self.file.to_string(),
            line,
            column,
            field: None,
            message: e.message().trim_end().to_string(),
        }
    }
}
