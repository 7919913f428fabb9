//! A setting refused: which one, and why, in words a user can act on.

/// A setting that cannot be taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// No setting of that name (with the closest one, when a typo is likely).
    #[error("unknown field `{name}`{}", suggestion.map(|s| format!(", did you mean `{s}`?")).unwrap_or_default())]
    Unknown {
        /// The name as given.
        name: String,
        /// The known name closest to it, if one is close enough to be a likely typo.
        suggestion: Option<&'static str>,
    },
    /// A value of the wrong shape, or out of bounds.
    #[error("{message}")]
    Bad {
        /// The setting's name (its current spelling, even when an old one was given).
        name: &'static str,
        /// Why the value is refused; the whole of the error's message.
        message: String,
    },
    /// Two settings that exclude each other, both set.
    #[error("{name} cannot be set together with {other}")]
    Conflict {
        /// One of the two settings.
        name: &'static str,
        /// The other one, which excludes it.
        other: &'static str,
    },
    /// A setting whose switch is off.
    #[error("{name} needs {needs}")]
    Needs {
        /// The setting given.
        name: &'static str,
        /// The switch it needs on.
        needs: &'static str,
    },
}

impl SettingError {
    /// The message as the command line spells settings (`--auto-throttle-target needs
    /// --auto-throttle`).
    pub fn flag_message(&self) -> String {
        let flag = |name: &str| format!("--{}", name.replace('_', "-"));
        match self {
            SettingError::Unknown { name, .. } => format!("unknown option {}", flag(name)),
            SettingError::Bad { name, message } => format!("{}: {message}", flag(name)),
            SettingError::Conflict { name, other } => {
                format!("{} cannot be used with {}", flag(name), flag(other))
            }
            SettingError::Needs { name, needs } => format!("{} needs {}", flag(name), flag(needs)),
        }
    }

    /// The setting it is about (its name as given, for an unknown one).
    pub fn name(&self) -> &str {
        match self {
            SettingError::Unknown { name, .. } => name,
            SettingError::Bad { name, .. }
            | SettingError::Conflict { name, .. }
            | SettingError::Needs { name, .. } => name,
        }
    }
}
