//! The GGUF's own Jinja chat template, rendered with minijinja.

use minijinja::{Environment, ErrorKind, Value, context};

use crate::{ChatMessage, Error};

/// A chat template taken from a model's metadata (`tokenizer.chat_template`).
#[derive(Debug)]
pub struct ChatTemplate {
    env: Environment<'static>,
    bos_token: String,
    eos_token: String,
}

const NAME: &str = "chat_template";

impl ChatTemplate {
    /// Compile a template; `bos_token`/`eos_token` are the texts templates may refer to.
    pub fn new(source: &str, bos_token: &str, eos_token: &str) -> Result<ChatTemplate, Error> {
        let mut env = Environment::new();
        // Hugging Face templates call `raise_exception(msg)` to reject conversations.
        env.add_function(
            "raise_exception",
            |msg: String| -> Result<Value, minijinja::Error> {
                Err(minijinja::Error::new(ErrorKind::InvalidOperation, msg))
            },
        );
        env.add_template_owned(NAME.to_owned(), source.to_owned())
            .map_err(|e| {
                Error::Template(format!("cannot compile the GGUF's chat template: {e}"))
            })?;
        Ok(ChatTemplate {
            env,
            bos_token: bos_token.to_owned(),
            eos_token: eos_token.to_owned(),
        })
    }

    /// Render a conversation followed by the assistant's generation prompt (`add_generation_prompt = true`).
    pub fn render(&self, messages: &[ChatMessage]) -> Result<String, Error> {
        let tmpl = self
            .env
            .get_template(NAME)
            .map_err(|e| Error::Template(e.to_string()))?;
        tmpl.render(context! {
            messages => messages,
            add_generation_prompt => true,
            bos_token => self.bos_token.as_str(),
            eos_token => self.eos_token.as_str(),
        })
        .map_err(|e| Error::BadRequest(format!("chat template rejected the messages: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_chatml_with_and_without_system() {
        let src = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}\
                   {{ '<|im_start|>system\\nDEFAULT<|im_end|>\\n' }}{% endif %}{{'<|im_start|>' + message['role'] \
                   + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}\
                   {% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
        let t = ChatTemplate::new(src, "<|im_start|>", "<|im_end|>").unwrap();
        let user_only = t.render(&[ChatMessage::new("user", "hi")]).unwrap();
        assert_eq!(
            user_only,
            "<|im_start|>system\nDEFAULT<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
        );
        let with_system = t
            .render(&[
                ChatMessage::new("system", "S"),
                ChatMessage::new("user", "hi"),
            ])
            .unwrap();
        assert_eq!(
            with_system,
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
        );
    }

    #[test]
    fn raise_exception_becomes_bad_request() {
        let t = ChatTemplate::new("{{ raise_exception('no') }}", "", "").unwrap();
        assert!(matches!(t.render(&[]), Err(Error::BadRequest(m)) if m.contains("no")));
    }
}
