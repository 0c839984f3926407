//! The setup in force: the validated config, the entities loaded for it, and the bindings
//! derived from the two (one per plain action, one per instance of an entity action, each
//! with its title and icon rendered for the instance). A reload builds a new `Setup` and the
//! engine swaps it in whole; whoever took one keeps a consistent view until it drops it.
//!
//! It owns the bindings and the rendering of entity fields into the text and HTML the config
//! writes (titles, icons, `display` components, and the choices of entity-fed arguments,
//! rendered once per instance of their type, so that a start is checked against them and the
//! page offers them; an entity reload builds a new `Setup`, which renders them again). An
//! instance whose field would start an argument of the command with `-` is disabled here, with
//! the reason (the arguments' `leading_dash` rule: an entity file is no author's text). It
//! must not read files (the watcher loads config and entities) nor decide permissions. What the API shows of it to a caller
//! (dashboards, GetActionBinding, entities) is `api::catalog`'s.

use std::collections::HashMap;
use std::sync::Arc;

use tracing::warn;

use crate::arguments::{self, Choice};
use crate::config::{Action, Config, Disabled, Problem};
use crate::entities::{self, EntitySet, Instance};
pub use crate::template::escape_html;
use crate::template::{Placeholder, Template};

/// One way to start an action: the action itself, or, for an entity action, one instance
/// of its entity type.
#[derive(Debug, Clone)]
pub struct Binding {
    pub id: String,
    /// For an entity binding, a copy with the binding id and the title and icon rendered
    /// for the instance.
    pub action: Arc<Action>,
    /// The title as configured: what dashboards link by.
    pub template_title: String,
    /// The configured action's position in the config (the Action message's `order`).
    pub order: usize,
    pub instance: Option<Arc<Instance>>,
}

/// The configuration and entities in force, and the bindings derived from them.
pub struct Setup {
    pub config: Arc<Config>,
    pub entities: Arc<EntitySet>,
    bindings: Vec<Binding>,
    index: HashMap<String, usize>,
    /// What a run of a binding that is gone is judged against: an action that lists no ACL.
    gone: Action,
}

impl Setup {
    pub fn new(config: Arc<Config>, entities: Arc<EntitySet>) -> Setup {
        let mut bindings = Vec::new();
        let mut index = HashMap::new();
        for (order, action) in config.actions.iter().enumerate() {
            let Some(kind) = &action.entity else {
                let mut copy = action.clone();
                render_entity_choices(&mut copy, &entities);
                index.insert(action.id.clone(), bindings.len());
                bindings.push(Binding {
                    id: action.id.clone(),
                    action: Arc::new(copy),
                    template_title: action.title.clone(),
                    order,
                    instance: None,
                });
                continue;
            };
            for instance in entities.instances(kind) {
                let id = entities::binding_id(&action.id, &instance.key);
                if index.contains_key(&id) {
                    warn!(
                        "binding {id} of action {} is also another binding's id: skipped",
                        action.id
                    );
                    continue;
                }
                let mut copy = action.clone();
                copy.id = id.clone();
                copy.title = render_for(&action.title, instance);
                // Icons are HTML (an entity or an <img>), like display components.
                copy.icon = render_html_for(&action.icon, instance);
                let file = entity_file(&config, kind);
                if copy.disabled.is_none()
                    && let Some(problem) = leading_field(&copy, instance, &file)
                        .or_else(|| climbing_field(&copy, instance, &file))
                {
                    // Logged once per load (a reload builds a new Setup), and shown greyed
                    // with the reason: a button that always fails must say why.
                    warn!(
                        "binding {id} of action {} is disabled: {problem}",
                        action.id
                    );
                    copy.disabled = Some(Disabled {
                        errors: vec![problem],
                        shown: true,
                    });
                }
                render_entity_choices(&mut copy, &entities);
                index.insert(id.clone(), bindings.len());
                bindings.push(Binding {
                    id,
                    action: Arc::new(copy),
                    template_title: action.title.clone(),
                    order,
                    instance: Some(Arc::new(instance.clone())),
                });
            }
        }
        Setup {
            config,
            entities,
            bindings,
            index,
            gone: Action::removed("", ""),
        }
    }

    pub fn binding(&self, id: &str) -> Option<&Binding> {
        self.index.get(id).map(|&i| &self.bindings[i])
    }

    pub fn action(&self, id: &str) -> Option<&Arc<Action>> {
        self.binding(id).map(|b| &b.action)
    }

    /// The action every permission check on a run of `binding_id` is made against: the
    /// binding's action in this setup, whatever the run started with, so a reload that takes
    /// an ACL away takes it away from old runs too. When the binding is gone (its action or
    /// its entity instance was removed), an action that lists no ACL stands in: only
    /// `defaultPermissions` and the ACLs added to every action grant anything on it, which is
    /// never more than any configured action would grant.
    pub fn action_for_run(&self, binding_id: &str) -> &Action {
        self.action(binding_id).map_or(&self.gone, |a| a.as_ref())
    }

    /// Every binding, in config order (entity bindings in instance order).
    pub fn bindings(&self) -> &[Binding] {
        &self.bindings
    }
}

/// The choices of each entity-fed argument (`entity: <type>` on the argument): every choice
/// written is a template, rendered (value and title) once per instance of the type, in
/// instance order; a value rendered twice is offered once. With no instance loaded there is
/// no choice, and a start refuses every value but an empty one.
fn render_entity_choices(action: &mut Action, entities: &EntitySet) {
    for argument in &mut action.arguments {
        let Some(kind) = &argument.entity else {
            continue;
        };
        let templates = std::mem::take(&mut argument.choices);
        let mut seen = std::collections::HashSet::new();
        for instance in entities.instances(kind) {
            for choice in &templates {
                let value = render_for(&choice.value, instance);
                // A start refuses it (`arguments::settle`); said once per load, where the
                // author can see which instance of which file it is.
                if let Err(why) = arguments::leading_dash(&value, argument.dash)
                    && seen.insert(value.clone())
                {
                    warn!(
                        "action {}: argument {:?} offers {value:?} from instance {:?} of entity \
                         type {kind:?}, and a start refuses it: it {why}",
                        action.id, argument.name, instance.key
                    );
                    argument.choices.push(Choice {
                        title: render_for(&choice.title, instance),
                        value,
                    });
                    continue;
                }
                if seen.insert(value.clone()) {
                    argument.choices.push(Choice {
                        value,
                        title: render_for(&choice.title, instance),
                    });
                }
            }
        }
    }
}

/// The entity file that declares `kind`, as the config names it (for messages).
fn entity_file(config: &Config, kind: &str) -> String {
    config.entities.iter().find(|e| e.name == kind).map_or_else(
        || format!("entity type {kind:?}"),
        |e| e.file.display().to_string(),
    )
}

/// Why `instance` cannot run `action`: a field that is `.` or holds a `..` path component
/// stands in a path the command builds (`template::leads`) or reaches a directory the command
/// takes code from (`cd /srv/apps/{{ .CurrentEntity.name }} &&
/// ./deploy.sh`, `make -C /srv/{{ … }}`), where `../../tmp/x` runs other code; or is an
/// absolute path where the field starts that directory's path (`cd {{ … }}`).
fn climbing_field(action: &Action, instance: &Instance, file: &str) -> Option<Problem> {
    let value_of = |p: &Placeholder| match p {
        Placeholder::Entity(field) => instance.field(field),
        Placeholder::Argument(_) => None,
    };
    let (p, value, _) = action.template.leading_out(value_of)?;
    let Placeholder::Entity(field) = &p else {
        return None;
    };
    Some(Problem {
        path: format!("{file}, instance {:?}", instance.key),
        message: format!(
            "its field {field:?} is {value:?}, which is `.`, holds `..` or is an absolute path, \
             and {p} stands in a path the command builds (`cd /srv/{{{{ … }}}}`, `/srv/{{{{ … }}}}/run.py`), \
             where it leads out of the directory meant and picks other files or code"
        ),
    })
}

/// Why `instance` cannot run `action`: a field that starts with `-` fills a placeholder that
/// starts an argument of the command (`ls {{ .CurrentEntity.name }}`, `exec: [ls, '{{ … }}']`),
/// where the program would read it as an option, and the action does not allow it
/// (`allowLeadingDash: true`). Inside a larger word (`--name={{ … }}`, `/srv/{{ … }}`) a
/// value is never an option. The rule is the arguments' (`arguments::leading_dash`).
fn leading_field(action: &Action, instance: &Instance, file: &str) -> Option<Problem> {
    action.template.leading().into_iter().find_map(|p| {
        let Placeholder::Entity(field) = p else {
            return None;
        };
        let value = instance.field(field)?;
        let why = arguments::leading_dash(&value, action.entity_dash).err()?;
        let message = if why == arguments::Broken::Dots {
            format!(
                "its field {field:?} is {value:?}, and {p} starts an argument of the command, \
                 where a program reads it as the directory it works in or the one above \
                 (`tar -C /srv/sites {{{{ … }}}}` would take every site, or their parent)"
            )
        } else {
            format!(
                "its field {field:?} is {value:?}, which starts with `-`, and {p} starts an \
                 argument of the command, where the program would read it as an option; set \
                 `allowLeadingDash: true` on the action if that is meant"
            )
        };
        Some(Problem {
            path: format!("{file}, instance {:?}", instance.key),
            message,
        })
    })
}

/// `text` with the instance's fields filled in, when every placeholder in it is an entity
/// field; otherwise the text as written.
pub fn render_for(text: &str, instance: &Instance) -> String {
    render_with(text, instance, |v| v)
}

/// The same for HTML written in the config (`display` components, icons): entity values come
/// from files that scripts write, so they are data wherever they stand (`Template::html`
/// escapes them, and percent-encodes them inside an address). A placeholder where no
/// encoding is safe (the config loader warned about it) is left empty.
pub fn render_html_for(text: &str, instance: &Instance) -> String {
    match Template::html(text) {
        Ok(t)
            if t.placeholders()
                .all(|(p, _)| matches!(p, Placeholder::Entity(_))) =>
        {
            t.render(&|p| match p {
                Placeholder::Entity(field) => instance.field(field),
                Placeholder::Argument(_) => None,
            })
        }
        Ok(_) => text.to_string(),
        Err(_) => {
            Template::literal(text).map_or_else(|_| text.to_string(), |t| t.render(&|_| None))
        }
    }
}

fn render_with(text: &str, instance: &Instance, value: impl Fn(String) -> String) -> String {
    match Template::literal(text) {
        Ok(t)
            if t.placeholders()
                .all(|(p, _)| matches!(p, Placeholder::Entity(_))) =>
        {
            t.render(&|p| match p {
                Placeholder::Entity(field) => instance.field(field).map(&value),
                Placeholder::Argument(_) => None,
            })
        }
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution::tests::action;

    fn instance(yaml: &str) -> Instance {
        crate::entities::parse(yaml, "e.yaml")
            .unwrap()
            .instances
            .remove(0)
    }

    #[test]
    fn titles_take_entity_fields_and_html_gets_them_escaped() {
        let i = instance("- {name: \"<b>x</b> & 'y'\"}\n");
        assert_eq!(
            render_for("Ping {{ .CurrentEntity.name }}", &i),
            "Ping <b>x</b> & 'y'"
        );
        assert_eq!(
            render_html_for("<i>{{ server.name }}</i>", &i),
            "<i>&lt;b&gt;x&lt;/b&gt; &amp; &#39;y&#39;</i>"
        );
        // Text with an argument placeholder or no valid placeholder is left as written.
        assert_eq!(render_for("Run {{ arg }}", &i), "Run {{ arg }}");
        assert_eq!(render_for("broken {{", &i), "broken {{");
    }

    #[test]
    fn entity_fed_choices_are_rendered_per_instance() {
        let (config, _) = crate::config::parse(
            "actions:
  - id: restart
    title: Restart
    exec: [docker, restart, '{{ name }}']
    arguments:
      - name: name
        entity: container
        choices: [{value: '{{ container.Names }}', title: '{{ .CurrentEntity.Names }} ({{ container.Image }})'}]
      - {name: plain, choices: [{value: a}]}
  - id: per
    title: 'On {{ server.name }}'
    entity: server
    shell: 'true'
    arguments:
      - {name: c, entity: container, choices: [{value: '{{ container.Names }}'}]}
",
            crate::config::Source::Embedded,
            "/".into(),
            &|_| None,
        )
        .unwrap();
        let mut entities = EntitySet::default();
        let containers = crate::entities::parse(
            "{\"Names\":\"web\",\"Image\":\"nginx\"}\n{\"Names\":\"db\",\"Image\":\"pg\"}\n{\"Names\":\"web\",\"Image\":\"again\"}\n",
            "c.json",
        )
        .unwrap();
        entities.replace("container", containers.instances);
        entities.replace(
            "server",
            crate::entities::parse("- {name: s1}\n", "s.yaml")
                .unwrap()
                .instances,
        );
        let setup = Setup::new(Arc::new(config), Arc::new(entities));
        let choices = |id: &str, arg: usize| -> Vec<(String, String)> {
            setup.action(id).unwrap().arguments[arg]
                .choices
                .iter()
                .map(|c| (c.value.clone(), c.title.clone()))
                .collect()
        };
        // One per instance, a value rendered twice offered once; other arguments as written.
        assert_eq!(
            choices("restart", 0),
            [
                ("web".to_string(), "web (nginx)".to_string()),
                ("db".to_string(), "db (pg)".to_string())
            ]
        );
        assert_eq!(choices("restart", 1), [("a".to_string(), "a".to_string())]);
        // On an entity action's binding too.
        assert_eq!(choices("per-0", 0).len(), 2);
        // The config keeps the templates, for the next render.
        assert_eq!(
            setup.config.actions[0].arguments[0].choices[0].value,
            "{{ container.Names }}"
        );
    }

    #[test]
    fn an_entity_action_has_one_binding_per_instance() {
        let mut config =
            crate::config::parse("{}", crate::config::Source::Embedded, "/".into(), &|_| None)
                .unwrap()
                .0;
        let mut plain = (*action("plain")).clone();
        plain.title = "Plain".into();
        let mut per = (*action("ping")).clone();
        per.title = "Ping {{ .CurrentEntity.name }}".into();
        per.entity = Some("server".into());
        config.actions = vec![plain, per];
        let mut entities = EntitySet::default();
        let file = crate::entities::parse(
            "- {id: a b, name: alpha}\n- {id: c, name: gamma}\n",
            "s.yaml",
        )
        .unwrap();
        entities.replace("server", file.instances);
        let setup = Setup::new(Arc::new(config), Arc::new(entities));
        let ids: Vec<&str> = setup.bindings().iter().map(|b| b.id.as_str()).collect();
        assert_eq!(ids, ["plain", "ping-a_b", "ping-c"]);
        let b = setup.binding("ping-c").unwrap();
        assert_eq!(b.action.title, "Ping gamma");
        assert_eq!(b.template_title, "Ping {{ .CurrentEntity.name }}");
        assert_eq!(b.instance.as_ref().unwrap().key, "c");
        assert!(
            setup.binding("ping").is_none(),
            "an entity action has no binding of its own"
        );
    }
}
