//! Tests of `arguments::types`, kept apart so the module reads on its own.

use super::*;
use crate::arguments::fixtures::*;

// The words clients and docs quote, pinned here.
const RULE_ASCII: &str = "must be letters and digits only (A-Z, a-z, 0-9)";
const RULE_INT: &str = "must be a whole number: an optional '-' followed by the digits 0-9";
const RULE_INT_RANGE: &str =
    "must be a whole number between -9223372036854775808 and 9223372036854775807";
const RULE_CHECKBOX: &str = "must be true, false, 1 or 0";
const RULE_EMPTY: &str = "must not be empty";

fn all_types() -> Vec<ArgType> {
    TYPE_NAMES
        .iter()
        .map(|name| {
            let text = if *name == "regex:PATTERN" {
                "regex:(?s).*"
            } else {
                name
            };
            t(text)
        })
        .chain([ArgType::Untyped, ArgType::ChoiceOnly])
        .collect()
}

#[test]
fn ascii() {
    table(
        "ascii",
        &[
            ("a", true),
            ("Z", true),
            ("0", true),
            ("abcXYZ0189", true),
            ("", false),
            (" ", false),
            ("a b", false),
            ("a-b", false),
            ("a_b", false),
            ("a.b", false),
            ("a,b", false),
            ("abc\n", false),
            ("\nabc", false),
            ("{{ x }}", false),
            ("é", false),
        ],
    );
}

#[test]
fn ascii_identifier() {
    table(
        "ascii_identifier",
        &[
            ("a", true),
            ("my-host_01.local", true),
            ("-", false),
            // The directories `.` and `..` (where the command works, the one above).
            (".", false),
            ("..", false),
            // `..` anywhere: a cut suffix or prefix may leave it (`${V%.conf}` of `...conf`).
            ("...", false),
            ("a..", false),
            ("a.b.c", true),
            ("-rf", false),
            ("a-rf", true),
            ("", false),
            ("a b", false),
            ("a,b", false),
            ("a/b", false),
            ("a:b", false),
            ("a@b", false),
            ("a+b", false),
            ("a=b", false),
        ],
    );
}

#[test]
fn ascii_sentence() {
    table(
        "ascii_sentence",
        &[
            ("Hello, world.", true),
            (" ", true),
            (",", true),
            ("a - b_c", true),
            ("", false),
            ("Hello!", false),
            ("a/b", false),
            ("a:b", false),
            ("a\u{A0}b", false),
            ("a\rb", false),
        ],
    );
}

#[test]
fn unicode_identifier() {
    table(
        "unicode_identifier",
        &[
            ("abc", true),
            ("héllo", true),
            ("日本語", true),
            ("Ünïcödé_1.2-3", true),
            ("Привет", true),
            ("٣", true),
            ("ａｂｃ", true),
            ("", false),
            ("a b", false),
            ("a@b", false),
            ("a/b", false),
            ("a\\b", false),
            ("a,b", false),
            ("e\u{301}", false),
            ("\u{301}", false),
            ("a\u{200B}b", false),
            ("a\u{200D}b", false),
            ("a\u{202E}b", false),
            ("a\u{A0}b", false),
            ("a\u{3000}b", false),
            ("😀", false),
        ],
    );
}

#[test]
fn int() {
    table(
        "int",
        &[
            ("0", true),
            ("-0", true),
            ("007", true),
            ("42", true),
            ("-42", true),
            ("9223372036854775807", true),
            ("-9223372036854775808", true),
            ("0009223372036854775807", true),
            ("9223372036854775808", false),
            ("-9223372036854775809", false),
            ("99999999999999999999", false),
            ("-99999999999999999999", false),
            ("", false),
            ("-", false),
            ("--1", false),
            ("+1", false),
            ("1-", false),
            ("1.0", false),
            ("1e3", false),
            ("0x10", false),
            (" 1", false),
            ("1 ", false),
            ("1_000", false),
            ("1,000", false),
            ("٣", false),
            ("１", false),
            ("²", false),
            ("\u{2212}1", false), // Unicode minus sign
        ],
    );
    // Passed on as written, not rewritten to a canonical number.
    assert_eq!(ok(&ArgType::Int, "007"), "007");
    assert_eq!(ok(&ArgType::Int, "-0"), "-0");
    assert_eq!(
        refused(&ArgType::Int, "9223372036854775808"),
        RULE_INT_RANGE
    );
    assert_eq!(refused(&ArgType::Int, "1.5"), RULE_INT);
    assert_eq!(i64::MAX.to_string(), "9223372036854775807");
    assert_eq!(i64::MIN.to_string(), "-9223372036854775808");
}

#[test]
fn checkbox() {
    table(
        "checkbox",
        &[
            ("true", true),
            ("false", true),
            ("1", true),
            ("0", true),
            ("TRUE", true),
            ("False", true),
            ("", false),
            ("yes", false),
            ("no", false),
            ("on", false),
            ("2", false),
            ("-1", false),
            ("01", false),
            (" true", false),
            ("true ", false),
            ("true\n", false),
            ("ｔｒｕｅ", false),
            ("truе", false), // Cyrillic е
            ("t", false),
        ],
    );
    assert_eq!(ok(&ArgType::Checkbox, "TRUE"), "true");
    assert_eq!(ok(&ArgType::Checkbox, "False"), "false");
    assert_eq!(ok(&ArgType::Checkbox, "1"), "1");
    // With choices, the choices are the rule.
    let choices = ["--force", ""];
    assert_eq!(
        ArgType::Checkbox.check("--force", &choices),
        Ok("--force".into())
    );
    assert_eq!(ArgType::Checkbox.check("", &choices), Ok(String::new()));
    assert_eq!(
        ArgType::Checkbox.check("true", &choices),
        Err(Broken::Choice)
    );
    assert_eq!(
        ArgType::Checkbox.check("--FORCE", &choices),
        Err(Broken::Choice)
    );
}

#[test]
fn checklist() {
    let choices = ["a", "b", "c d", "e-f"];
    let check = |value: &str| ArgType::Checklist.check(value, &choices);
    for good in ["a", "a,b", "b,a", "a,b,c d,e-f", "c d"] {
        assert_eq!(check(good), Ok(good.to_owned()), "{good:?}");
    }
    for bad in [
        "", "x", "a,x", "a,a", "b,a,b", "a,,b", ",a", "a,", ",", "a, b", "a ,b", "A", "c", "a;b",
        "a\nb", "a,b\n", "c\u{A0}d",
    ] {
        let why = check(bad).unwrap_err().to_string();
        assert!(!why.is_empty(), "{bad:?}");
    }
    assert_eq!(check("a,a"), Err(Broken::ChecklistTwice));
    assert_eq!(
        Broken::ChecklistTwice.to_string(),
        "must not list the same item twice"
    );
    // Without choices: ascii_sentence items.
    table(
        "checklist",
        &[
            ("one", true),
            ("one,two", true),
            ("two words,x.y_z-1", true),
            (" a, b", true),
            ("", false),
            ("a,a", false),
            ("a,,b", false),
            ("a,", false),
            ("a;b", false),
            ("a/b", false),
            ("é", false),
            // Each item is a word of its own: no option, no `.` or `..` (fe30m F13).
            ("a,-r", false),
            ("a, --checkpoint=1", false),
            ("a,..", false),
            ("a,b-c", true),
        ],
    );
    // A long list stays linear and the duplicate is still found at the end.
    let many: Vec<String> = (0..5000).map(|i| format!("i{i}")).collect();
    let mut list = many.join(",");
    ok(&ArgType::Checklist, &list);
    list.push_str(",i0");
    refused(&ArgType::Checklist, &list);
}

#[test]
fn any_text_types() {
    for name in [
        "password",
        "raw_string_multiline",
        "very_dangerous_raw_string",
    ] {
        let ty = t(name);
        for value in [
            "",
            " ",
            "plain",
            "multi\nline\r\ntext",
            "tab\there",
            "$(rm -rf /)",
            "`id`",
            "'; rm -rf / #",
            "\"$HOME\"",
            "{{ other }}",
            "a\u{200B}b\u{202E}c",
            "日本語 😀",
            "\\",
            "\u{1}\u{7f}",
        ] {
            assert_eq!(ok(&ty, value), value, "{name}");
        }
        let meta: String = SHELL_META.iter().collect();
        assert_eq!(ok(&ty, &meta), meta);
        refused(&ty, "\0");
        refused(&ty, "a\0b");
    }
}

#[test]
fn display_only_types() {
    for name in ["confirmation", "html"] {
        let ty = t(name);
        assert!(ty.is_display_only());
        assert!(!ty.is_secret());
        assert_eq!(ok(&ty, "<b>Sure?</b>"), "<b>Sure?</b>");
        assert_eq!(ok(&ty, "1"), "1");
        assert_eq!(ok(&ty, ""), "");
        refused(&ty, "a\0");
    }
}

#[test]
fn choice_only() {
    let ty = ArgType::parse("", true).unwrap();
    assert_eq!(ty, ArgType::ChoiceOnly);
    assert_eq!(ty.name(), "");
    let choices = ["start", "stop", "$(reboot)", ""];
    for good in ["start", "stop", "$(reboot)", ""] {
        assert_eq!(ty.check(good, &choices), Ok(good.to_owned()));
    }
    for bad in [
        "Start",
        "start ",
        " start",
        "sta",
        "startstop",
        "start\n",
        "ｓｔａｒｔ",
    ] {
        assert_eq!(ty.check(bad, &choices), Err(Broken::Choice), "{bad:?}");
    }
    // No choices: nothing is one of them.
    assert_eq!(ty.check("start", &[]), Err(Broken::Choice));
    refused(&ty, "\0");
}

/// Types whose rule is a set of ASCII characters (or a syntax built from them), each with
/// a valid value to put metacharacters and look-alikes into.
fn ascii_only_types() -> Vec<(ArgType, &'static str)> {
    vec![
        (t("ascii"), "abc"),
        (t("ascii_identifier"), "abc"),
        (t("ascii_sentence"), "abc"),
        (t("int"), "12"),
        (t("datetime"), "2024-01-01T00:00"),
        (t("checkbox"), "true"),
        (t("checklist"), "a,b"),
        (t("regex:[a-z]+"), "abc"),
    ]
}

#[test]
fn ascii_only_types_refuse_every_shell_metacharacter() {
    let mut types = ascii_only_types();
    types.push((t("unicode_identifier"), "abc"));
    for (ty, base) in types {
        ok(&ty, base);
        for m in SHELL_META {
            for value in [
                m.to_string(),
                format!("{m}{base}"),
                format!("{base}{m}"),
                format!("{}{m}{}", &base[..1], &base[1..]),
            ] {
                refused(&ty, &value);
            }
        }
        for value in ["$(id)", "`id`", "{{ x }}", "a;b", "${IFS}"] {
            refused(&ty, value);
        }
    }
}

#[test]
fn ascii_only_types_refuse_lookalikes() {
    let mut types = ascii_only_types();
    types.push((ArgType::Email, "a@b.c"));
    types.push((ArgType::Url, "http://h/"));
    for (ty, base) in types {
        for look in LOOKALIKES {
            for value in [look.to_string(), format!("{base}{look}")] {
                refused(&ty, &value);
            }
        }
    }
}

#[test]
fn no_type_accepts_nul() {
    for ty in all_types() {
        for value in ["\0", "a\0", "\0a", "a\0b"] {
            let choices = [value];
            let why = ty.check(value, &choices).unwrap_err().to_string();
            assert_eq!(why, "must not contain a NUL byte", "{}", ty.name());
        }
    }
}

#[test]
fn length_is_bounded_for_every_type() {
    let at_limit = "a".repeat(MAX_VALUE_BYTES);
    let over = "a".repeat(MAX_VALUE_BYTES + 1);
    for ty in all_types() {
        let choices = [over.as_str()];
        let why = ty.check(&over, &choices).unwrap_err().to_string();
        assert_eq!(why, "must be at most 65536 bytes long", "{}", ty.name());
    }
    for name in ["ascii", "password", "raw_string_multiline", "checklist"] {
        assert_eq!(ok(&t(name), &at_limit).len(), MAX_VALUE_BYTES);
    }
    // Multi-byte characters count in bytes.
    refused(&t("password"), &"é".repeat(MAX_VALUE_BYTES / 2 + 1));
}

#[test]
fn no_error_message_contains_the_value() {
    let marker = "Zq7SECRETvalue9";
    let values = [
        format!("{marker}!"),
        format!("{marker} {marker}"),
        format!("{marker}@"),
        format!("http://{marker} x"),
        format!("{marker}\0"),
        format!("{marker},{marker}"),
        marker.repeat(MAX_VALUE_BYTES / marker.len() + 1),
    ];
    for ty in all_types() {
        for value in &values {
            let choices = ["x"];
            if let Err(why) = ty.check(value, &choices) {
                let why = why.to_string();
                assert!(!why.contains(marker), "{}: {why}", ty.name());
                assert!(!why.contains("SECRET"), "{}: {why}", ty.name());
            }
        }
    }
    // Nor does an unknown type name come back.
    let why = ArgType::parse("Zq7SECRETtype", false)
        .unwrap_err()
        .to_string();
    assert!(!why.contains("SECRET"), "{why}");
}

#[test]
fn parse_names_round_trip() {
    for name in TYPE_NAMES.iter().filter(|n| !n.starts_with("regex:")) {
        let ty = t(name);
        assert_eq!(ty.name(), *name);
        // A declared type stays that type when choices are declared too.
        assert_eq!(ArgType::parse(name, true).unwrap(), ty);
    }
    let untyped = ArgType::parse("", false).unwrap();
    assert_eq!(untyped, ArgType::Untyped);
    assert_eq!(untyped.name(), "");
    // No type checks as ascii.
    assert_eq!(untyped.check("a b", &[]), t("ascii").check("a b", &[]));
    assert_eq!(ArgType::parse("", true).unwrap(), ArgType::ChoiceOnly);
    // One of each name (a sample pattern for regex:PATTERN), plus Untyped and ChoiceOnly.
    assert_eq!(all_types().len(), TYPE_NAMES.len() + 2);
}

#[test]
fn parse_refuses_unknown_names() {
    for bad in [
        "ASCII",
        "Ascii",
        " ascii",
        "ascii ",
        "asci",
        "select",
        "string",
        "text",
        "integer",
        "bool",
        "boolean",
        "number",
        "regex",
        "Regex:a",
        "REGEX:a",
        " regex:a",
        "\0",
        "ascii\n",
        "unicode",
        "raw_string",
    ] {
        let why = ArgType::parse(bad, false).unwrap_err().to_string();
        assert!(why.starts_with("unknown argument type"), "{bad:?}: {why}");
        for name in TYPE_NAMES {
            assert!(why.contains(name), "{bad:?}: {why} lacks {name}");
        }
    }
    let why = ArgType::parse("ASCII", false).unwrap_err().to_string();
    assert!(why.contains("did you mean ascii?"), "{why}");
    let why = ArgType::parse("Regex:a", false).unwrap_err().to_string();
    assert!(why.contains("write regex: in lower case"), "{why}");
    let why = ArgType::parse("select", false).unwrap_err().to_string();
    assert!(!why.contains("did you mean"), "{why}");
}

#[test]
fn flags() {
    for ty in all_types() {
        assert_eq!(ty.is_secret(), ty == ArgType::Password, "{}", ty.name());
        assert_eq!(
            ty.is_display_only(),
            matches!(ty, ArgType::Confirmation | ArgType::Html),
            "{}",
            ty.name()
        );
    }
}

#[test]
fn validate_type_results() {
    let cases: &[(&str, &str, bool, &str)] = &[
        ("ascii", "abc", true, ""),
        ("ascii", "a b", false, RULE_ASCII),
        ("ascii", "", false, RULE_EMPTY),
        ("", "abc", true, ""),
        ("", "a b", false, RULE_ASCII),
        ("int", "-9223372036854775808", true, ""),
        ("int", "9223372036854775808", false, RULE_INT_RANGE),
        ("datetime", "2024-02-29T12:00", true, ""),
        (
            "datetime",
            "2023-02-29T12:00",
            false,
            "the day must exist in that month",
        ),
        ("checkbox", "1", true, ""),
        ("checkbox", "yes", false, RULE_CHECKBOX),
        ("checklist", "a,b", true, ""),
        ("password", "", true, ""),
        ("password", "$(x)", true, ""),
        ("raw_string_multiline", "a\nb", true, ""),
        (
            "very_dangerous_raw_string",
            "\0",
            false,
            "must not contain a NUL byte",
        ),
        ("confirmation", "anything", true, ""),
        ("html", "<b>x</b>", true, ""),
        // No pattern is compiled from a request, valid or not, cheap or not.
        ("regex:[a-z]+", "abc", false, REGEX_FROM_REQUEST),
        ("regex:(?:.{0,100}){0,100}x", "a", false, REGEX_FROM_REQUEST),
        ("regex:[", "x", false, REGEX_FROM_REQUEST),
        ("email", "a@b.c", true, ""),
        ("email", "", false, RULE_EMPTY),
        ("url", "", false, RULE_EMPTY),
        ("datetime", "", false, RULE_EMPTY),
        ("url", "https://example.com/", true, ""),
        ("unicode_identifier", "héllo", true, ""),
    ];
    for &(ty, value, valid, why) in cases {
        assert_eq!(
            validate_type(ty, value),
            (valid, why.to_owned()),
            "{ty:?} {value:?}"
        );
    }
    for ty in ["nope", "select", "ASCII", "regex"] {
        let (valid, why) = validate_type(ty, "abc");
        assert!(!valid);
        assert!(why.starts_with("unknown argument type"), "{why}");
        assert!(why.contains("ascii_identifier"), "{why}");
    }
    let (valid, why) = validate_type("Regex:[a-z]", "x");
    assert!(!valid);
    assert!(why.contains("write regex: in lower case"), "{why}");
}

/// A value that starts with `-` is an option to the program it reaches (`ssh
/// -oProxyCommand=…` runs a command), so every free-text type refuses it unless the argument
/// allows it; the sign of an int, the author's pattern and the any-text types keep it.
#[test]
fn a_leading_dash_is_refused_by_every_free_text_type() {
    // (type, a value of that type that starts with '-', refused by default)
    let cases: &[(&str, &str, bool)] = &[
        ("ascii_identifier", "-rf", true),
        ("ascii_identifier", "--version", true),
        ("ascii_sentence", "-r victim", true),
        ("unicode_identifier", "-é", true),
        ("email", "-oProxyCommand=touch&x|x@y.z", true),
        ("email", "-a@b.c", true),
        ("checklist", "-r,b", true),
        // Each item of a checklist is a word of its own.
        ("checklist", "a,-r", true),
        ("int", "-5", false),
        ("regex:-?[0-9]+", "-7", false),
        ("password", "-secret", false),
        ("raw_string_multiline", "-x", false),
        ("very_dangerous_raw_string", "-x", false),
    ];
    for (name, value, refused) in cases {
        let rule = t(name);
        let got = rule.check(value, &[]);
        assert_eq!(
            got == Err(Broken::LeadingDash),
            *refused,
            "{name} {value:?}: {got:?}"
        );
        // Allowed, the value gets the type's own rule.
        assert!(
            rule.check_with(value, &[], Dash::Allow).is_ok(),
            "{name} {value:?} allowed"
        );
    }
    // A dash later in the value is no option: the word starts with something else.
    for (name, value) in [
        ("ascii_identifier", "a-rf"),
        ("ascii_sentence", "old -r victim"),
        ("email", "a-b@c.d"),
        ("checklist", "a,b-r"),
    ] {
        assert!(t(name).check(value, &[]).is_ok(), "{name} {value:?}");
    }
    // A checklist's declared choices are the author's own, dash or not.
    assert_eq!(
        ArgType::Checklist.check("-v,-q", &["-v", "-q"]),
        Ok("-v,-q".into())
    );
    // The types that cannot hold a leading dash say their own rule.
    for name in ["ascii", "datetime"] {
        assert_ne!(t(name).check("-x", &[]), Err(Broken::LeadingDash), "{name}");
    }
    // The message names why and what to do, and not the value.
    let why = Broken::LeadingDash.to_string();
    assert!(
        why.contains("option") && why.contains("allowLeadingDash"),
        "{why}"
    );
}

#[test]
fn choices_keep_a_leading_dash_and_allow_lets_a_free_text_value_through() {
    use crate::arguments::check;
    assert_eq!(
        check(
            &ArgType::AsciiIdentifier,
            "--force",
            &["--force"],
            Dash::Refuse
        ),
        Ok("--force".into())
    );
    assert_eq!(
        check(&ArgType::AsciiIdentifier, "-x", &[], Dash::Refuse),
        Err(Broken::LeadingDash)
    );
    assert_eq!(
        check(&ArgType::AsciiIdentifier, "-x", &[], Dash::Allow),
        Ok("-x".into())
    );
}
