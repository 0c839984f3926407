//! The tables of cases for entity files: formats, keys and titles, fields, bounds.
use super::*;

fn parsed(text: &str) -> EntityFile {
    parse(text, "test.yaml").unwrap_or_else(|e| panic!("{text:?} failed: {e}"))
}

/// (key, title) of every instance.
fn keys_titles(file: &EntityFile) -> Vec<(String, String)> {
    file.instances
        .iter()
        .map(|i| (i.key.clone(), i.title.clone()))
        .collect()
}

#[test]
fn a_file_over_its_instance_bound_is_refused_in_every_format() {
    let yaml = "- {id: a}\n- {id: b}\n- {id: c}\n";
    let array = r#"[{"id": "a"}, {"id": "b"}, {"id": "c"}]"#;
    let lines = "{\"id\": \"a\"}\n{\"id\": \"b\"}\n{\"id\": \"c\"}\n";
    for text in [yaml, array, lines] {
        assert_eq!(parse_within(text, "f", 3).unwrap().instances.len(), 3);
        let e = parse_within(text, "f", 2).unwrap_err().to_string();
        assert!(e.contains("more than maxEntityInstances (2"), "{e}");
    }
    // A stream of JSON objects is not read past the bound: a broken tail after it is
    // never reached.
    let e = parse_within("{\"id\": 1}\n{\"id\": 2}\n{broken", "f", 1)
        .unwrap_err()
        .to_string();
    assert!(e.contains("maxEntityInstances"), "{e}");
}

#[test]
fn a_file_over_its_byte_bound_is_refused_unread() {
    let dir = std::env::temp_dir().join(format!("actiond-entities-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("big.yaml");
    let text: String = (0..200).map(|i| format!("- {{id: e{i}}}\n")).collect();
    std::fs::write(&path, text).unwrap();
    let size = std::fs::metadata(&path).unwrap().len() as usize;
    let fits = Bounds {
        bytes: size,
        instances: 1000,
    };
    assert_eq!(load_within(&path, fits).unwrap().instances.len(), 200);
    let e = load_within(
        &path,
        Bounds {
            bytes: size - 1,
            ..fits
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("larger than maxEntityFileBytes"), "{e}");
    let e = load_within(
        &path,
        Bounds {
            instances: 199,
            ..fits
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("maxEntityInstances"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_format_gives_the_same_instances() {
    let want = vec![
        ("0".to_string(), "a".to_string()),
        ("1".to_string(), "b".to_string()),
    ];
    let cases: &[(&str, &str)] = &[
        (
            "yaml list",
            "- name: a\n  port: 22\n- name: b\n  port: 80\n",
        ),
        (
            "yaml flow list",
            "[{name: a, port: 22}, {name: b, port: 80}]",
        ),
        (
            "json array",
            r#"[{"name":"a","port":22},{"name":"b","port":80}]"#,
        ),
        (
            "json lines, blank lines",
            "{\"name\":\"a\",\"port\":22}\n\n  \n{\"name\":\"b\",\"port\":80}\n",
        ),
        (
            "json stream, pretty",
            "{\n  \"name\": \"a\",\n  \"port\": 22\n}\n{\n  \"name\": \"b\",\n  \"port\": 80\n}",
        ),
        (
            "byte order mark",
            "\u{feff}[{\"name\":\"a\",\"port\":22},{\"name\":\"b\",\"port\":80}]",
        ),
        (
            "leading comment",
            "# servers\n- {name: a, port: 22}\n- {name: b, port: 80}\n",
        ),
    ];
    for (label, text) in cases {
        let file = parsed(text);
        assert_eq!(keys_titles(&file), want, "{label}");
        assert_eq!(
            file.instances[1].field("port").as_deref(),
            Some("80"),
            "{label}"
        );
        assert!(file.warnings.is_empty(), "{label}: {:?}", file.warnings);
    }
}

#[test]
fn empty_files_have_no_instances() {
    for text in [
        "",
        "\n\n",
        "   ",
        "# nothing yet\n",
        "[]",
        "~\n",
        "\u{feff}",
    ] {
        assert_eq!(parsed(text), EntityFile::default(), "{text:?}");
    }
}

#[test]
fn keys_and_titles_follow_the_rules() {
    // (label, text, the (key, title) of each instance)
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, &'a str)]);
    let cases: &[Case] = &[
        (
            "position keys, name titles",
            "- {name: a}\n- {name: b}",
            &[("0", "a"), ("1", "b")],
        ),
        (
            "id is key and title",
            "- {id: web}\n- {id: db}",
            &[("web", "web"), ("db", "db")],
        ),
        (
            "key beats id; title beats name beats id",
            "- {key: k1, id: i1, name: n1, title: t1}\n- {id: i2, name: n2}",
            &[("k1", "t1"), ("i2", "n2")],
        ),
        (
            "numeric id as text",
            "- {id: 7, name: seven}\n- {id: 1234567890123}",
            &[("7", "seven"), ("1234567890123", "1234567890123")],
        ),
        (
            "no title fields: the key",
            "- {hostname: attic}\n- {key: b}",
            &[("0", "0"), ("b", "b")],
        ),
        (
            "empty or structured titles are skipped",
            "- {title: '', name: [x], id: real}",
            &[("real", "real")],
        ),
        (
            "case-insensitive names, as OliveTin (docker's ID)",
            "- {ID: 4baf, Names: media}\n- {Title: T, Key: K}",
            &[("4baf", "4baf"), ("K", "T")],
        ),
        (
            "exact spelling wins over another case",
            "- {ID: upper, id: lower}",
            &[("lower", "lower")],
        ),
        (
            "explicit and position keys mix",
            "- {id: x}\n- {name: second}",
            &[("x", "x"), ("1", "second")],
        ),
        ("boolean title", "- {name: true}", &[("0", "true")]),
    ];
    for (label, text, want) in cases {
        let got = keys_titles(&parsed(text));
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(k, t)| (k.to_string(), t.to_string()))
            .collect();
        assert_eq!(got, want, "{label}");
    }
}

#[test]
fn duplicate_titles_warn_and_still_load() {
    let file = parsed("- {id: a, title: Same}\n- {id: b, title: Same}\n- {id: c, title: Other}");
    assert_eq!(file.instances.len(), 3);
    assert_eq!(file.warnings.len(), 1, "{:?}", file.warnings);
    assert!(file.warnings[0].contains("\"Same\""), "{:?}", file.warnings);
    assert!(file.warnings[0].contains("0 and 1"), "{:?}", file.warnings);
}

#[test]
fn bad_files_fail_with_a_useful_message() {
    // (label, file name, text, every fragment the message must contain)
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            "duplicate keys",
            "s.yaml",
            "- {id: web}\n- {id: db}\n- {id: web}",
            &["s.yaml: ", "instances 0 and 2", "\"web\""],
        ),
        (
            "explicit key equals a position",
            "s.yaml",
            "- {id: '1'}\n- {name: b}",
            &["instances 0 and 1", "\"1\""],
        ),
        (
            "duplicate keys in JSON lines",
            "c.json",
            "{\"ID\":\"x\"}\n{\"ID\":\"x\"}\n",
            &["c.json: ", "\"x\""],
        ),
        (
            "broken JSON line",
            "c.json",
            "{\"a\":1}\n{\"a\":\n",
            &["c.json: invalid JSON", "line 3"],
        ),
        (
            "broken YAML",
            "s.yaml",
            "- name: a\n  bad: [1, 2\n- name: b\n",
            &["s.yaml: invalid YAML", "line"],
        ),
        (
            "a mapping, not a list",
            "s.yaml",
            "name: a\nip: 1.2.3.4\n",
            &["list of mappings", "a mapping"],
        ),
        (
            "a scalar item",
            "s.yaml",
            "- {name: a}\n- just text\n",
            &["instance 1", "\"just text\"", "not a mapping"],
        ),
        (
            "a JSON scalar in the stream",
            "c.json",
            "{\"a\":1}\n42\n",
            &["instance 1", "the number 42"],
        ),
        (
            "two JSON arrays",
            "c.json",
            "[{\"a\":1}]\n[{\"a\":2}]\n",
            &["only value in the file"],
        ),
        (
            "unusable key",
            "s.yaml",
            "- {key: [a, b]}\n",
            &["instance 0", "`key` is a list"],
        ),
        (
            "empty id",
            "s.yaml",
            "- {id: ''}\n",
            &["`id` is the text \"\"", "non-empty"],
        ),
        (
            "neither JSON nor YAML, named .json: the JSON error",
            "c.json",
            "[{\"a\": 1,]",
            &["invalid JSON"],
        ),
        (
            "neither JSON nor YAML, named .yaml: the YAML error",
            "s.yaml",
            "[{a: 1}, {b: ]]",
            &["invalid YAML"],
        ),
    ];
    for (label, name, text, fragments) in cases {
        let err = parse(text, name).expect_err(label).to_string();
        for fragment in *fragments {
            assert!(
                err.contains(fragment),
                "{label}: {err:?} lacks {fragment:?}"
            );
        }
    }
}

#[test]
fn numbers_keep_their_value() {
    let cases: &[(&str, &str)] = &[
        ("{\"v\":1234567890}", "1234567890"),
        ("{\"v\":9223372036854775807}", "9223372036854775807"),
        ("{\"v\":18446744073709551615}", "18446744073709551615"),
        ("{\"v\":-42}", "-42"),
        ("{\"v\":1.234567}", "1.234567"),
        ("{\"v\":1.0}", "1"),
        ("{\"v\":1e3}", "1000"),
        ("- {v: 1234567890}", "1234567890"),
        ("- {v: 0755}", "0755"),
        ("- {v: 1.5}", "1.5"),
        ("- {v: true}", "true"),
        ("- {v: false}", "false"),
        ("- {v: ~}", ""),
        ("- {v: yes}", "yes"),
    ];
    for (text, want) in cases {
        assert_eq!(
            parsed(text).instances[0].field("v").as_deref(),
            Some(*want),
            "{text}"
        );
    }
}

#[test]
fn fields_render_at_dot_paths() {
    let yaml = "- name: web\n  \
                  ports: [22, 80]\n  \
                  Labels:\n    com.docker.compose.project: media\n    tier: {level: 2}\n  \
                  Names: media-indexer\n  \
                  notes: \"say \\\"hi\\\"\"\n  \
                  empty: {}\n";
    let json = r#"{"name":"web","ports":[22,80],"Labels":{"com.docker.compose.project":"media","tier":{"level":2}},"Names":"media-indexer","notes":"say \"hi\"","empty":{}}"#;
    let cases: &[(&str, Option<&str>)] = &[
        ("name", Some("web")),
        ("Names", Some("media-indexer")),
        ("ports", Some("[22,80]")),
        ("ports.1", Some("80")),
        ("ports.2", None),
        ("ports.x", None),
        ("Labels.com.docker.compose.project", Some("media")),
        ("Labels.tier.level", Some("2")),
        (
            "Labels",
            Some(r#"{"com.docker.compose.project":"media","tier":{"level":2}}"#),
        ),
        ("notes", Some("say \"hi\"")),
        ("empty", Some("{}")),
        ("name.x", None),
        ("missing", None),
        ("names", None),
        ("", None),
    ];
    for (label, text) in [("yaml", yaml), ("json", json)] {
        let file = parsed(text);
        let instance = &file.instances[0];
        for (path, want) in cases {
            assert_eq!(instance.field(path).as_deref(), *want, "{label}: {path}");
        }
    }
}

#[test]
fn json_duplicate_keys_keep_the_last_value() {
    let file = parsed(r#"{"name":"a","x":{"y":1,"y":2},"name":"b"}"#);
    let instance = &file.instances[0];
    assert_eq!(instance.title, "b");
    assert_eq!(instance.field("x").as_deref(), Some(r#"{"y":2}"#));
    assert_eq!(instance.field("name").as_deref(), Some("b"));
}

#[test]
fn binding_ids_are_safe_whatever_the_key() {
    let cases: &[(&str, &str, &str)] = &[
        ("ping", "0", "ping-0"),
        ("ping", "web-1_a", "ping-web-1_a"),
        ("ping", "a b/c;d", "ping-a_b_c_d"),
        ("ping", "../../etc", "ping-______etc"),
        ("ping", "x'\"$(rm)`", "ping-x____rm__"),
        ("ping", "é🙂", "ping-__"),
        ("ping", "a\nb\0c", "ping-a_b_c"),
        (
            "restart_docker",
            "4bafe6f9f956",
            "restart_docker-4bafe6f9f956",
        ),
    ];
    for (action, key, want) in cases {
        assert_eq!(binding_id(action, key), *want, "{key:?}");
    }
}

#[test]
fn the_set_looks_up_and_dumps_vars() {
    let mut set = EntitySet::default();
    set.replace(
        "server",
        parsed("- {id: web, hostname: w.example, port: 22, up: true, tags: [a], gone: ~}")
            .instances,
    );
    set.replace("room", parsed("- hostname: attic").instances);
    assert_eq!(set.types().collect::<Vec<_>>(), ["room", "server"]);
    assert_eq!(set.instances("server").len(), 1);
    assert!(set.instances("nope").is_empty());
    assert_eq!(
        set.get("server", "web").and_then(|i| i.field("hostname")),
        Some("w.example".to_string())
    );
    assert!(set.get("server", "0").is_none());
    let vars = set.vars();
    let want: BTreeMap<String, String> = [
        ("entity.room.0.hostname", "attic"),
        ("entity.server.web.gone", ""),
        ("entity.server.web.hostname", "w.example"),
        ("entity.server.web.id", "web"),
        ("entity.server.web.port", "22"),
        ("entity.server.web.up", "true"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(vars, want);
}

#[test]
fn load_all_reports_per_file_and_keeps_the_rest() {
    let files: HashMap<&str, &str> = [
        ("a.yaml", "- {id: x}\n- {id: y}\n"),
        ("b.yaml", "- {id: z}\n"),
        ("dup.yaml", "- {id: y}\n"),
        ("bad.yaml", "- [unclosed\n"),
        (
            "titles.yaml",
            "- {id: p, name: same}\n- {id: q, name: same}\n",
        ),
    ]
    .into_iter()
    .collect();
    let read = |path: &Path| {
        let name = path.display().to_string();
        match files.get(name.as_str()) {
            Some(text) => parse(text, &name),
            None => Err(BadFile {
                file: name,
                why: Why::Content(Content::Yaml("cannot read the file: not found".into())),
            }),
        }
    };
    let source = |file: &str, name: &str| EntitySource {
        file: PathBuf::from(file),
        name: name.to_string(),
    };
    let loaded = load_all_with(
        &[
            source("a.yaml", "server"),
            source("b.yaml", "server"),
            source("dup.yaml", "server"),
            source("bad.yaml", "room"),
            source("missing.yaml", "vm"),
            source("titles.yaml", "box"),
        ],
        &read,
    );
    let keys = |t: &str| -> Vec<&str> {
        loaded
            .set
            .instances(t)
            .iter()
            .map(|i| i.key.as_str())
            .collect()
    };
    assert_eq!(keys("server"), ["x", "y", "z"]);
    assert_eq!(keys("box"), ["p", "q"]);
    assert_eq!(
        loaded.set.types().collect::<Vec<_>>(),
        ["box", "room", "server", "vm"]
    );
    let errors: Vec<(&str, &str)> = loaded
        .errors
        .iter()
        .map(|p| (p.file.to_str().unwrap_or(""), p.type_name.as_str()))
        .collect();
    assert_eq!(
        errors,
        [
            ("dup.yaml", "server"),
            ("bad.yaml", "room"),
            ("missing.yaml", "vm")
        ]
    );
    assert!(
        loaded.errors[0].message.contains("\"y\"") && loaded.errors[0].message.contains("a.yaml"),
        "{:?}",
        loaded.errors[0]
    );
    assert!(
        loaded.errors[1].message.contains("invalid YAML"),
        "{:?}",
        loaded.errors[1]
    );
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    assert_eq!(loaded.warnings[0].type_name, "box");
}

/// Every refusal of a file's content word for word, as the log shows it after the file name.
#[test]
fn content_refusals_word_for_word() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "c.json",
            "[{\"a\":1}]\n[{\"a\":2}]\n",
            "c.json: invalid JSON: a JSON array must be the only value in the file; write one \
             array of objects, or one object per line",
        ),
        (
            "c.json",
            "{\"a\":1}\n{\"a\":\n",
            "c.json: invalid JSON: EOF while parsing a value at line 3 column 0",
        ),
        (
            "s.yaml",
            "name: a\n",
            "s.yaml: an entity file is a list of mappings (`- name: …` per instance), or JSON \
             objects; this one is a mapping",
        ),
        (
            "s.yaml",
            "- just text\n",
            "s.yaml: instance 0 is the text \"just text\", not a mapping of fields",
        ),
        (
            "s.yaml",
            "- {id: web}\n- {id: web}\n",
            "s.yaml: instances 0 and 1 have the same key \"web\"; keys must be unique in a file \
             (give each instance a distinct `key` or `id`)",
        ),
        (
            "s.yaml",
            "- {key: ''}\n",
            "s.yaml: instance 0: `key` is the text \"\", but as the instance's unique key it \
             must be non-empty text or a number",
        ),
    ];
    for (name, text, words) in cases {
        assert_eq!(&parse(text, name).unwrap_err().to_string(), words);
    }
}
