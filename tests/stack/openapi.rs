//! The owner API's OpenAPI document (`GET /api/v1/openapi.json`, no token) is the router's
//! own map: every `/api/...` route the api function's sources add, with each method the router
//! takes on it, is an operation of the document, and every operation of the document is
//! routed. A route added to a resource module's `routes()` without its `#[utoipa::path]` (and
//! its name in `ApiDoc`'s `paths(...)`) fails here.

use std::collections::BTreeSet;
use std::path::Path;

use openloop_tests::Stack;
use reqwest::Method;
use serde_json::Value;

const METHODS: [&str; 5] = ["GET", "POST", "PUT", "DELETE", "PATCH"];

/// Every path literal the api function's sources hand to `.route(` that starts with `/api/`:
/// each resource module's `routes()` (`functions/api/src/*.rs`, merged in its `lib.rs`). A
/// `.route(` whose path is not a literal would hide its route from this test, so it fails here.
fn routed_paths() -> BTreeSet<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../functions/api/src");
    let mut paths = BTreeSet::new();
    let mut folders = vec![src];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder)
            .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for (at, _) in text.match_indices(".route(") {
                let rest = text[at + ".route(".len()..].trim_start();
                let Some(literal) = rest.strip_prefix('"') else {
                    panic!("{}: a .route( whose path is not a string literal", path.display())
                };
                let Some(end) = literal.find('"') else { continue };
                if literal[..end].starts_with("/api/") {
                    paths.insert(literal[..end].to_owned());
                }
            }
        }
    }
    paths
}

/// A path template with each `{param}` filled with a word the router matches.
fn concrete(template: &str) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').map_or(rest.len(), |c| open + c + 1);
        out.push_str("x1");
        rest = &rest[close..];
    }
    out.push_str(rest);
    out
}

/// The methods the router takes on `path`: anything but its 405 and its unknown-path 404.
async fn routed_methods(stack: &Stack, path: &str) -> Vec<&'static str> {
    let mut methods = Vec::new();
    for method in METHODS {
        let method_value = Method::from_bytes(method.as_bytes()).unwrap_or(Method::GET);
        let (status, body) = stack.call(method_value, &concrete(path), None, None).await;
        let unknown_path = status == 404 && body["error"]["message"] == "no such endpoint";
        if status != 405 && !unknown_path {
            methods.push(method);
        }
    }
    methods
}

fn collect_refs(value: &Value, refs: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(r) = map.get("$ref").and_then(Value::as_str) {
                refs.push(r.to_owned());
            }
            map.values().for_each(|v| collect_refs(v, refs));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, refs)),
        _ => {}
    }
}

#[tokio::test]
async fn every_route_is_documented_and_every_documented_route_is_routed() {
    let stack = Stack::start("openapi-routes").await;
    let (status, document) = stack.call(Method::GET, "/api/v1/openapi.json", None, None).await;
    assert_eq!(status, 200, "the document is served without a token: {document}");
    assert_eq!(document["openapi"].as_str().map(|v| &v[..2]), Some("3."), "{document}");
    let documented: BTreeSet<(String, String)> = document["paths"]
        .as_object()
        .unwrap_or_else(|| panic!("no paths: {document}"))
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .into_iter()
                .flat_map(|ops| ops.keys())
                .filter(|k| METHODS.contains(&k.to_ascii_uppercase().as_str()))
                .map(move |m| (path.clone(), m.to_ascii_uppercase()))
        })
        .collect();

    let paths = routed_paths();
    assert!(paths.len() > 40, "the route scan found the router's paths: {paths:?}");
    let mut routed = BTreeSet::new();
    for path in &paths {
        for method in routed_methods(&stack, path).await {
            routed.insert((path.clone(), method.to_owned()));
        }
    }
    let undocumented: Vec<_> = routed.difference(&documented).collect();
    let unrouted: Vec<_> = documented.difference(&routed).collect();
    assert!(
        undocumented.is_empty(),
        "routes without an operation in the OpenAPI document (add #[utoipa::path] to the handler and its name to ApiDoc's paths in functions/api/src/openapi.rs): {undocumented:?}"
    );
    assert!(unrouted.is_empty(), "operations of the document no route serves: {unrouted:?}");
}

/// A response as written, or the shared one it refers to.
fn shared_response<'a>(document: &'a Value, response: &'a Value) -> &'a Value {
    match response["$ref"].as_str().and_then(|r| r.strip_prefix("#/components/responses/")) {
        Some(name) => &document["components"]["responses"][name],
        None => response,
    }
}

/// Every operation but the document's own names the bearer token, answers in the error shape
/// it documents, and lists 401; each path parameter is declared.
#[tokio::test]
async fn each_operation_documents_its_token_errors_and_parameters() {
    let stack = Stack::start("openapi-shape").await;
    let (_, document) = stack.call(Method::GET, "/api/v1/openapi.json", None, None).await;
    assert_eq!(
        document["components"]["securitySchemes"]["bearer"]["scheme"], "bearer",
        "{document}"
    );
    assert_eq!(document["security"][0]["bearer"], Value::Array(vec![]), "{document}");
    // Every operation has its own id (OpenAPI requires it; a validator refuses a repeat).
    let mut ids = std::collections::BTreeMap::new();
    for (path, item) in document["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("path item") {
            let id = operation["operationId"]
                .as_str()
                .unwrap_or_else(|| panic!("{method} {path}: no operationId"));
            if let Some(other) = ids.insert(id.to_owned(), format!("{method} {path}")) {
                panic!("operationId {id} is both {other} and {method} {path}");
            }
        }
    }
    // Every reference names a schema or a shared response the document defines.
    let mut refs = Vec::new();
    collect_refs(&document, &mut refs);
    assert!(refs.len() > 100, "{} references", refs.len());
    for r in refs {
        let (kind, name) = r
            .strip_prefix("#/components/")
            .and_then(|rest| rest.split_once('/'))
            .filter(|(kind, _)| ["schemas", "responses"].contains(kind))
            .unwrap_or_else(|| panic!("a reference outside the schemas and responses: {r}"));
        assert!(document["components"][kind][name].is_object(), "{r} is not defined");
    }
    let error = &document["components"]["schemas"]["ErrorBody"];
    assert_eq!(error["required"][0], "error", "{error}");
    let mut operations = 0;
    for (path, item) in document["paths"].as_object().into_iter().flatten() {
        for (method, op) in item.as_object().into_iter().flatten() {
            operations += 1;
            let params: BTreeSet<&str> = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "path")
                .filter_map(|p| p["name"].as_str())
                .collect();
            let in_template: BTreeSet<&str> = path
                .split('/')
                .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
                .collect();
            assert_eq!(params, in_template, "{method} {path}: path parameters");
            if path == "/api/v1/openapi.json" {
                continue;
            }
            let unauthorized = shared_response(&document, &op["responses"]["401"]);
            assert!(
                unauthorized["content"]["application/json"]["schema"]["$ref"]
                    .as_str()
                    .is_some_and(|r| r.ends_with("/ErrorBody")),
                "{method} {path}: 401 in the error shape: {unauthorized}"
            );
            // What the document says is what the API does: no token, 401 in that shape.
            let (status, body) = stack
                .call(
                    Method::from_bytes(method.to_ascii_uppercase().as_bytes()).unwrap_or(Method::GET),
                    &concrete(path),
                    None,
                    None,
                )
                .await;
            assert_eq!(status, 401, "{method} {path}: {body}");
            assert_eq!(body["error"]["code"], "unauthorized", "{method} {path}: {body}");
        }
    }
    assert!(operations > 60, "{operations} operations");
}

/// The bounds the document gives are the ones the API keeps (the limits in core), and a value
/// one past a documented bound is refused with 422 in the error shape, nothing made.
#[tokio::test]
async fn the_documented_bounds_are_the_limits_the_api_keeps() {
    use openloop_core::kernel::limits;
    let stack = Stack::start("openapi-bounds").await;
    let (_, document) = stack.call(Method::GET, "/api/v1/openapi.json", None, None).await;
    let schemas = &document["components"]["schemas"];
    let bound = |schema: &str, field: &str, key: &str| -> f64 {
        let property = property(schemas, &schemas[schema]["properties"][field]);
        property[key]
            .as_f64()
            .unwrap_or_else(|| panic!("{schema}.{field} has no {key}: {}", schemas[schema]))
    };
    let cases: [(&str, &str, &str, f64); 11] = [
        ("CreateTask", "goal", "maxLength", limits::MAX_GOAL_CHARS as f64),
        ("CreateTask", "confidence", "maximum", 100.0),
        ("Skip", "reason", "maxLength", limits::MAX_SKIP_REASON_CHARS as f64),
        ("Resolution", "note", "maxLength", limits::MAX_RESOLVE_NOTE_CHARS as f64),
        (
            "Feedback",
            "comment",
            "maxLength",
            openloop_core::task::feedback::COMMENT_MAX_CHARS as f64,
        ),
        ("NewSuppression", "reason", "maxLength", limits::MAX_SUPPRESSION_REASON_CHARS as f64),
        ("NewMemory", "content", "maxLength", limits::MAX_MEMORY_CHARS as f64),
        ("NewMemory", "category", "maxLength", limits::MAX_MEMORY_CATEGORY_CHARS as f64),
        (
            "SettingsPatch",
            "member_weekly_limit",
            "maximum",
            f64::from(limits::MAX_MEMBER_WEEKLY_LIMIT),
        ),
        (
            "SettingsPatch",
            "daily_send_limit",
            "maximum",
            f64::from(limits::MAX_DAILY_SEND_LIMIT),
        ),
        (
            "SettingsPatch",
            "avg_membership_price",
            "maximum",
            openloop_core::kernel::number::MAX_MONEY,
        ),
    ];
    for (schema, field, key, limit) in cases {
        assert_eq!(bound(schema, field, key), limit, "{schema}.{field}.{key}");
    }

    // One past the documented bound: 422, in the error shape, nothing changed.
    let gym = stack.create_account("manual").await;
    let over = |n: f64| "x".repeat(n as usize + 1);
    let refusals = [
        (
            "/api/v1/memories",
            serde_json::json!({"content": over(bound("NewMemory", "content", "maxLength"))}),
        ),
        (
            "/api/v1/suppressions",
            serde_json::json!({"email": "a@example.com", "reason": over(bound("NewSuppression", "reason", "maxLength"))}),
        ),
        (
            "/api/v1/tasks",
            serde_json::json!({"task_type": "win_back", "member_id": "m1", "goal": over(bound("CreateTask", "goal", "maxLength"))}),
        ),
        (
            "/api/v1/tasks",
            serde_json::json!({"task_type": "win_back", "member_id": "m1", "goal": "g", "confidence": bound("CreateTask", "confidence", "maximum") + 1.0}),
        ),
    ];
    for (path, body) in refusals {
        let (status, answer) = stack.post(path, &gym.token, body).await;
        assert_eq!(status, 422, "{path}: {answer}");
        assert!(answer["error"]["code"].as_str().is_some_and(|c| !c.is_empty()), "{path}: {answer}");
    }
    let (status, settings) = stack
        .call(
            Method::PUT,
            "/api/v1/settings",
            Some(&gym.token),
            Some(serde_json::json!({"avg_membership_price": 1e-131})),
        )
        .await;
    assert_eq!(status, 422, "{settings}");
    let (_, tasks) = stack.get("/api/v1/tasks", &gym.token).await;
    assert_eq!(tasks["tasks"], Value::Array(vec![]), "nothing made: {tasks}");
}

/// A property's own schema: its reference followed, an optional one's `null` left aside.
fn property<'a>(schemas: &'a Value, schema: &'a Value) -> &'a Value {
    if let Some(r) = schema["$ref"].as_str() {
        return property(schemas, &schemas[r.trim_start_matches("#/components/schemas/")]);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(part) = schema[key].as_array().into_iter().flatten().find(|p| p["type"] != "null") {
            return property(schemas, part);
        }
    }
    schema
}

/// `schema` with its `$ref` followed (a reference already on the way is `None`: a cycle).
fn resolved<'a>(schemas: &'a Value, schema: &'a Value, seen: &mut BTreeSet<String>) -> Option<&'a Value> {
    match schema["$ref"].as_str() {
        Some(r) => {
            let name = r.trim_start_matches("#/components/schemas/");
            seen.insert(name.to_owned()).then(|| &schemas[name])
        }
        None => Some(schema),
    }
}

/// Each string `schema` may hold, at any depth, that has neither a `maxLength`, an `enum` (or
/// `const`) nor a date or time's `format`: named by `at`.
fn unbounded_strings(schemas: &Value, schema: &Value, at: &str, seen: &mut BTreeSet<String>, found: &mut Vec<String>) {
    let Some(schema) = resolved(schemas, schema, seen) else { return };
    for key in ["oneOf", "anyOf", "allOf"] {
        for part in schema[key].as_array().into_iter().flatten() {
            unbounded_strings(schemas, part, at, seen, found);
        }
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let bounded = schema["maxLength"].is_u64()
        || schema["enum"].is_array()
        || !schema["const"].is_null()
        || matches!(schema["format"].as_str(), Some("date" | "date-time"));
    if types.contains(&"string") && !bounded {
        found.push(at.to_owned());
    }
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        unbounded_strings(schemas, property, &format!("{at}.{name}"), seen, found);
    }
    if schema["items"].is_object() {
        unbounded_strings(schemas, &schema["items"], &format!("{at}[]"), seen, found);
    }
    if schema["additionalProperties"].is_object() {
        unbounded_strings(schemas, &schema["additionalProperties"], &format!("{at}.*"), seen, found);
    }
}

/// Whether `schema` says nothing of what it holds: an object without properties, a map's
/// values or parts to choose from.
fn bare_object(schemas: &Value, schema: &Value) -> bool {
    let Some(schema) = resolved(schemas, schema, &mut BTreeSet::new()) else {
        return false;
    };
    let described = ["properties", "additionalProperties", "oneOf", "anyOf", "allOf", "items", "enum"]
        .iter()
        .any(|k| !schema[k].is_null());
    let object = schema["type"] == "object" || schema["type"].is_null();
    object && !described
}

/// The rule cannot regress: every string a request body (at any depth) or a query parameter
/// takes is bounded in the document — a `maxLength`, an `enum`, or a date or time — and every
/// success answers with a described type, never a bare object. A field added as a plain
/// `String`, or an answer built as untyped JSON, fails here (docs/api.md, "Limits").
#[tokio::test]
async fn every_accepted_string_is_bounded_and_every_answer_is_described() {
    let stack = Stack::start("openapi-strings").await;
    let (_, document) = stack.call(Method::GET, "/api/v1/openapi.json", None, None).await;
    let schemas = &document["components"]["schemas"];
    let mut unbounded = Vec::new();
    let mut bare = Vec::new();
    let mut checked = 0;
    for (path, item) in document["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("path item") {
            let at = format!("{} {path}", method.to_ascii_uppercase());
            for media in op["requestBody"]["content"].as_object().into_iter().flat_map(|c| c.values()) {
                checked += 1;
                unbounded_strings(
                    schemas,
                    &media["schema"],
                    &format!("{at} body"),
                    &mut BTreeSet::new(),
                    &mut unbounded,
                );
            }
            for parameter in op["parameters"].as_array().into_iter().flatten().filter(|p| p["in"] == "query") {
                checked += 1;
                let name = parameter["name"].as_str().unwrap_or_default();
                unbounded_strings(
                    schemas,
                    &parameter["schema"],
                    &format!("{at} ?{name}"),
                    &mut BTreeSet::new(),
                    &mut unbounded,
                );
                assert_eq!(parameter["allowEmptyValue"], true, "{at} ?{name}: an empty value is an absent one");
            }
            // The document's own answer is an OpenAPI document, described by that standard.
            if path == "/api/v1/openapi.json" {
                continue;
            }
            for (status, response) in op["responses"].as_object().into_iter().flatten() {
                if !status.starts_with('2') {
                    continue;
                }
                for media in response["content"].as_object().into_iter().flat_map(|c| c.values()) {
                    if bare_object(schemas, &media["schema"]) {
                        bare.push(format!("{at} {status}"));
                    }
                }
            }
        }
    }
    assert!(checked > 40, "{checked} bodies and query parameters");
    assert!(
        unbounded.is_empty(),
        "strings the API takes without a documented bound: {unbounded:#?}"
    );
    assert!(bare.is_empty(), "successes answered as a bare object: {bare:#?}");

    // And the bound is kept: one past a documented maxLength, at the top and nested, is 422
    // in the error shape naming the field, nothing made.
    let gym = stack.create_account("manual").await;
    let max = |schema: &str, field: &str| -> usize {
        let property = property(schemas, &schemas[schema]["properties"][field]);
        property["maxLength"]
            .as_u64()
            .unwrap_or_else(|| panic!("{schema}.{field}: {property}")) as usize
    };
    let long = |schema: &str, field: &str| "x".repeat(max(schema, field) + 1);
    let refusals = [
        (
            "/api/v1/tasks",
            serde_json::json!({"task_type": long("CreateTask", "task_type"), "member_id": "m1", "goal": "g"}),
            "task_type",
        ),
        (
            "/api/v1/tasks",
            serde_json::json!({"task_type": "win_back", "member_id": "m1", "goal": "g", "draft": {"subject": "s", "body": long("DraftInput", "body")}}),
            "draft.body",
        ),
        (
            "/api/v1/recurring",
            serde_json::json!({"task_type": "churn_risk", "cron": long("NewTemplate", "cron")}),
            "cron",
        ),
        (
            "/api/v1/triggers",
            serde_json::json!({"event": "member.created", "task_type": "onboarding", "reentry": "once", "goal": long("TriggerInput", "goal")}),
            "goal",
        ),
    ];
    for (path, body, field) in refusals {
        let (status, answer) = stack.post(path, &gym.token, body).await;
        assert_eq!(status, 422, "{path}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with(field), "{path}: the message names {field}: {answer}");
    }
    // The settings change's texts — its own, the profile's, the agent overrides', the
    // PushPress credentials' — are bounded types too: refused by the rule the document shows.
    let settings_refusals = [
        (serde_json::json!({"timezone": long("SettingsPatch", "timezone")}), "timezone"),
        (
            serde_json::json!({"owner_phone": long("SettingsPatch", "owner_phone")}),
            "owner_phone",
        ),
        (
            serde_json::json!({"profile": {"display_name": long("Profile", "display_name")}}),
            "profile.display_name",
        ),
        (
            serde_json::json!({"profile": {"sign_off": long("Profile", "sign_off")}}),
            "profile.sign_off",
        ),
        (
            serde_json::json!({"profile": {"never_mention": ["ok", long("Profile", "display_name")]}}),
            "profile.never_mention[1]",
        ),
        (
            serde_json::json!({"agent_overrides": [{"agent": "retention", "prompt_additions": long("AgentOverride", "prompt_additions")}]}),
            "agent_overrides[0].prompt_additions",
        ),
        (
            serde_json::json!({"agent_overrides": [{"agent": long("AgentOverride", "agent")}]}),
            "agent_overrides[0].agent",
        ),
        (
            serde_json::json!({"pushpress": {"api_key": long("ConnectorCredentials", "api_key")}}),
            "pushpress.api_key",
        ),
    ];
    for (body, field) in settings_refusals {
        let (status, answer) = stack.call(Method::PUT, "/api/v1/settings", Some(&gym.token), Some(body)).await;
        assert_eq!(status, 422, "{field}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with(&format!("{field} must be")),
            "the message names {field}: {answer}"
        );
    }
    let (_, settings) = stack.get("/api/v1/settings", &gym.token).await;
    assert_eq!(
        settings["profile"]["display_name"], "CrossFit Renegade",
        "nothing changed: {settings}"
    );
    let (status, answer) = stack
        .get(&format!("/api/v1/tasks?cursor={}", long_query(&document)), &gym.token)
        .await;
    assert_eq!(
        (status, answer["error"]["code"].as_str()),
        (422, Some("invalid_cursor")),
        "{answer}"
    );
    let (_, tasks) = stack.get("/api/v1/tasks", &gym.token).await;
    assert_eq!(tasks["tasks"], Value::Array(vec![]), "nothing made: {tasks}");
    let (_, templates) = stack.get("/api/v1/recurring", &gym.token).await;
    assert_eq!(templates["templates"], Value::Array(vec![]), "nothing made: {templates}");
}

/// A cursor one character past the documented bound of `GET /api/v1/tasks?cursor=`.
fn long_query(document: &Value) -> String {
    let parameters = document["paths"]["/api/v1/tasks"]["get"]["parameters"]
        .as_array()
        .expect("parameters");
    let cursor = parameters.iter().find(|p| p["name"] == "cursor").expect("cursor");
    let max = property(&document["components"]["schemas"], &cursor["schema"])["maxLength"].as_u64();
    "c".repeat(max.expect("cursor's maxLength") as usize + 1)
}
