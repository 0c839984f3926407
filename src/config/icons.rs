//! Icons: OliveTin's short names (`icon: ping`) expanded to the HTML entities it uses, and
//! the icons OliveTin's page fetches from the internet (Iconify), which actiond's page, made
//! to work on a board without internet access, replaces with the title's first letter in a
//! circle; the config warns about each at load, except Material Design Icons names
//! (`mdi:garage`), which are Home Assistant's own: those go to Home Assistant as the button's
//! icon (`home_assistant_icon`), and the page's letter is their documented fallback. An icon
//! is otherwise HTML written in the config, passed on as written (the page sanitizes it).

use super::checker::Checker;

/// Whether an icon is one that OliveTin's page fetches from the internet: an Iconify name
/// (`mdi:garage`) or an `<iconify-icon>` element. actiond's page works offline, so it shows
/// the title's first letter in a circle instead (the page applies the same rule).
pub fn is_online_icon(icon: &str) -> bool {
    let icon = icon.trim();
    let name = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    let iconify_name = icon.split_once(':').is_some_and(|(set, glyph)| {
        set.starts_with(|c: char| c.is_ascii_lowercase()) && name(set) && name(glyph)
    });
    iconify_name || icon.to_ascii_lowercase().contains("<iconify-icon")
}

/// Warns about a placeholder in config HTML (an icon, a `display` component) that stands
/// where no encoding makes an entity's value safe (`Template::html`): the page shows the HTML
/// without that value.
pub(super) fn warn_unsafe_html_placeholder(c: &mut Checker<'_>, at: &str, html: &str) {
    if !html.contains("{{") {
        return;
    }
    if let Err(e) = crate::template::Template::html(html) {
        c.warn(at, format!("{}: the value is left out", e.message));
    }
}

/// The icon Home Assistant gets for an action: a Material Design Icons name as written
/// (`mdi:garage`), which Home Assistant ships; any other icon (HTML, an emoji, another
/// Iconify set Home Assistant does not ship) is not one it can show.
pub fn home_assistant_icon(icon: &str) -> Option<&str> {
    let icon = icon.trim();
    let glyph = icon.strip_prefix("mdi:")?;
    let ok = !glyph.is_empty()
        && !glyph.starts_with('-')
        && glyph
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    ok.then_some(icon)
}

/// Warns about an icon the page cannot show offline (see [`is_online_icon`]), unless it is
/// one Home Assistant shows: written for Home Assistant, it is not a mistake.
pub(super) fn warn_online_icon(c: &mut Checker<'_>, at: &str, icon: &str) {
    if is_online_icon(icon) && home_assistant_icon(icon).is_none() {
        c.warn(
            at,
            format!(
                "the icon {icon:?} is fetched from the internet (Iconify), which actiond's page \
                 never does: it shows the title's first letter in a circle instead; use an \
                 emoji or an HTML entity such as &#128274; for a picture"
            ),
        );
    }
}

/// OliveTin's icon short names (`icon: ping`), expanded to the HTML entities it uses, so a
/// config written for OliveTin shows the same icons.
const ICON_NAMES: &[(&str, &str)] = &[
    ("poop", "&#x1f4a9;"),
    ("smile", "&#x1F600;"),
    ("ping", "&#x1f4e1;"),
    ("backup", "&#128190;"),
    ("reboot", "&#128260;"),
    ("restart", "&#128260;"),
    ("box", "&#128230;"),
    ("ashtonished", "&#128562;"),
    ("clock", "&#128338;"),
    ("disk", "&#128189;"),
    ("logs", "&#128269;"),
    ("light", "&#128161;"),
    ("robot", "&#129302;"),
    ("ssh", "&#128272;"),
    ("theme", "&#127912;"),
];

/// An icon as written, or the HTML entity of an OliveTin short name (`ping`).
pub(super) fn expand_icon(icon: &str) -> String {
    ICON_NAMES
        .iter()
        .find(|(name, _)| *name == icon)
        .map_or_else(|| icon.to_string(), |(_, entity)| (*entity).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::fixtures::*;

    #[test]
    fn html_placeholders_where_no_encoding_is_safe_are_warned_about() {
        assert_warning(
            "entities: [{file: s.yaml, name: server}]\nactions:\n  - {title: x, shell: 'true', entity: server, icon: '<img src={{ .CurrentEntity.img }}>'}\n",
            "actions[0].icon",
            "inside a quoted attribute value",
        );
        assert_warning(
            "dashboards:\n  - title: D\n    contents:\n      - {type: display, title: '<b onclick=\"{{ server.name }}\">x</b>'}\n",
            "dashboards[0].contents[0].title",
            "the value is left out",
        );
        let (_, warnings) = ok(
            "dashboards:\n  - title: D\n    contents:\n      - {type: display, title: '<img src=\"{{ server.img }}\" alt=\"{{ server.name }}\">'}\n",
        );
        assert!(
            warnings.iter().all(|w| !w.message.contains("left out")),
            "{warnings:?}"
        );
    }

    #[test]
    fn icon_short_names_expand() {
        let (c, _) = ok(&format!("{ONE_ACTION}    icon: restart\n"));
        assert_eq!(c.actions[0].icon, "&#128260;");
    }

    #[test]
    fn icons_from_the_internet_are_named_at_load() {
        for online in [
            "mdi:garage",
            " mdi:garage-open ",
            "material-symbols:print-rounded",
            "<iconify-icon icon=\"carbon:awake\"></iconify-icon>",
            "<ICONIFY-ICON icon='x:y'>",
        ] {
            assert!(is_online_icon(online), "{online:?}");
        }
        for offline in [
            "&#128274;",
            "🔒",
            "ping",
            "<img src=\"custom-webui/x.png\">",
            "<b>P</b>",
            "12:30",
            "Mdi:Garage",
            "a: b",
            "mdi:",
            "",
        ] {
            assert!(!is_online_icon(offline), "{offline:?}");
        }
        assert_warning(
            &format!("{ONE_ACTION}    icon: 'material-symbols:garage'\n"),
            "actions[0].icon",
            "the icon \"material-symbols:garage\" is fetched from the internet",
        );
        // Home Assistant's own icons are written for it: no warning.
        let (_, warnings) = loads(&format!("{ONE_ACTION}    icon: 'mdi:garage'\n"));
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_warning(
            "dashboards:\n  - {title: D, icon: '<iconify-icon icon=\"a:b\"></iconify-icon>', contents: [{title: x}]}\n",
            "dashboards[0].icon",
            "fetched from the internet",
        );
        // The icon is passed on as written: a page with internet access may still show it.
        let (c, _) = loads(&format!("{ONE_ACTION}    icon: 'mdi:garage'\n"));
        assert_eq!(c.actions[0].icon, "mdi:garage");
    }

    #[test]
    fn home_assistant_icons_are_mdi_names() {
        let cases: &[(&str, Option<&str>)] = &[
            ("mdi:garage", Some("mdi:garage")),
            (" mdi:garage-open ", Some("mdi:garage-open")),
            ("mdi:numeric-1-box", Some("mdi:numeric-1-box")),
            ("mdi:", None),
            ("mdi:-x", None),
            ("mdi:Garage", None),
            ("mdi:garage open", None),
            ("mdi:garage\"", None),
            ("material-symbols:garage", None),
            ("&#128274;", None),
            ("🔒", None),
            ("<b>mdi:garage</b>", None),
        ];
        for (icon, want) in cases {
            assert_eq!(home_assistant_icon(icon), *want, "{icon:?}");
        }
    }
}
