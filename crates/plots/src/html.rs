//! HTML pages from templates: `report.html` ([`crate::report`]) and the explorer's page shell
//! (`report::explorer`), both in `templates/` and compiled into the crate.
//!
//! Escaping is automatic: every `{{ value }}` of every template is HTML-escaped by this module's `escape` (`&`, `<`,
//! `>`, `"`, `'`), whatever its origin. The one way around it is a value the Rust side wraps with [`raw`] (a script,
//! a style sheet or a data block that was made safe for its context by its caller); no template uses `|safe`. No
//! page is assembled with `push_str` or `format!` anywhere in the workspace.
//!
//! Whitespace: `{% … %}` lines vanish whole (`trim_blocks`, `lstrip_blocks`), and a template's last newline is kept,
//! so a template reads line for line as the page it writes.

use std::sync::OnceLock;

use minijinja::{AutoEscape, Environment, Value};

use crate::Error;

/// The templates, by name.
const TEMPLATES: [(&str, &str); 2] = [
    ("report.html", include_str!("../templates/report.html")),
    ("explorer.html", include_str!("../templates/explorer.html")),
];

/// Escapes text for HTML element content and attribute values (quoted with `"` or `'`): the templates' one escaper.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A value of a template's context that is written as it is (made by [`raw`]).
pub type Raw = Value;

/// A text written into the page as it is, unescaped: only for text that its caller made safe for where the template
/// puts it (the explorer's script, style and escaped JSON block).
pub fn raw(text: String) -> Raw {
    Value::from_safe_string(text)
}

fn environment() -> Result<&'static Environment<'static>, Error> {
    static ENV: OnceLock<Result<Environment<'static>, String>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_keep_trailing_newline(true);
        env.set_auto_escape_callback(|_| AutoEscape::Html);
        env.set_formatter(|out, state, value| {
            if value.is_safe() || value.is_none() || state.auto_escape() != AutoEscape::Html {
                return minijinja::escape_formatter(out, state, value);
            }
            out.write_str(&escape(&value.to_string()))
                .map_err(minijinja::Error::from)
        });
        for (name, source) in TEMPLATES {
            env.add_template(name, source)
                .map_err(|e| format!("template {name}: {e}"))?;
        }
        Ok(env)
    })
    .as_ref()
    .map_err(|message| Error::Draw {
        figure: "an HTML page".to_owned(),
        message: message.clone(),
    })
}

/// Renders template `name` with `context` (any `Serialize` value, or `minijinja::context!`).
pub fn render(name: &str, context: impl serde::Serialize) -> Result<String, Error> {
    let render_error = |e: minijinja::Error| Error::Draw {
        figure: format!("the page {name}"),
        message: e.to_string(),
    };
    environment()?
        .get_template(name)
        .map_err(render_error)?
        .render(context)
        .map_err(render_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_compiles() {
        for (name, _) in TEMPLATES {
            environment().unwrap().get_template(name).unwrap();
        }
    }

    #[test]
    fn values_are_escaped_unless_raw() {
        let text = "<b title='x'>&\"</b>";
        let ours = environment().unwrap();
        // The formatter escapes like `escape`, and `raw` passes through.
        let tmpl = ours.template_from_str("{{ a }}|{{ b }}").unwrap();
        let out = tmpl
            .render(minijinja::context! { a => text, b => raw(text.to_owned()) })
            .unwrap();
        assert_eq!(out, format!("{}|{text}", escape(text)));
        assert_eq!(
            escape(text),
            "&lt;b title=&#39;x&#39;&gt;&amp;&quot;&lt;/b&gt;"
        );
    }
}
