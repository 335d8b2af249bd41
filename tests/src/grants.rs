//! What `infra/template.yaml` grants each function, read from its text: the resources one
//! block each, and a function's `Allow` statements, its own and those of the managed policies
//! it names, each as the actions and the resources they cover (named as
//! [`crate::signed_calls::Asked`] names them).

pub const TEMPLATE: &str = include_str!("../../infra/template.yaml");

/// The template's resources, one block each (a line indented two spaces starts one).
pub fn resources(template: &str) -> Vec<String> {
    let mut blocks: Vec<String> = Vec::new();
    for line in template.lines() {
        let starts = line.len() > 2 && line.starts_with("  ") && line[2..].starts_with(|c: char| c.is_ascii_uppercase());
        match blocks.last_mut() {
            Some(block) if !starts => {
                block.push_str(line);
                block.push('\n');
            }
            _ => blocks.push(format!("{line}\n")),
        }
    }
    blocks
}

/// The template's function blocks by logical name (`TickFunction`).
pub fn functions(template: &str) -> Vec<(String, String)> {
    resources(template)
        .into_iter()
        .filter(|b| b.contains("Type: AWS::Serverless::Function"))
        .map(|b| (b.lines().next().unwrap_or_default().trim().trim_end_matches(':').to_owned(), b))
        .collect()
}

/// The block of resource `name` among `blocks` ([`resources`]).
pub fn named(blocks: &[String], name: &str) -> String {
    blocks
        .iter()
        .find(|b| b.starts_with(&format!("  {name}:\n")))
        .unwrap_or_else(|| panic!("{name} is declared"))
        .clone()
}

/// One `Allow` statement: its actions, and its resources as [`resource`] names them.
#[derive(Clone, Debug)]
pub struct Statement {
    /// The managed policy it is in, or `inline`.
    pub policy: String,
    pub actions: Vec<String>,
    pub resources: Vec<String>,
}

impl Statement {
    /// Whether it allows `action` on `resource`.
    pub fn allows(&self, action: &str, resource: &str) -> bool {
        self.actions.iter().any(|a| a == action)
            && self
                .resources
                .iter()
                .any(|r| r == "*" || r == resource || (r == "index/*" && resource.starts_with("index/")))
    }
}

/// A resource line of a statement, named as the calls name it.
pub fn resource(line: &str) -> String {
    let line = line.trim().trim_start_matches("- ").trim();
    if line.contains("Table.Arn}/index/") {
        let index = line.rsplit("/index/").next().unwrap_or_default().trim_end_matches('"');
        return format!("index/{index}");
    }
    if line == "!GetAtt Table.Arn" {
        return "table".into();
    }
    if let Some(name) = line.strip_prefix("!GetAtt ").and_then(|n| n.strip_suffix(".Arn")) {
        return match name {
            "EventBus" => "bus".into(),
            "SecretsKey" => "key".into(),
            queue if queue.ends_with("Queue") => queue.into(),
            other => other.into(),
        };
    }
    if line.contains("InboundMailBucket.Arn") {
        return "bucket".into();
    }
    "*".into()
}

/// The `Allow` statements of a `Statement:` list in `text` (a policy's or a function's).
fn statements(text: &str, policy: &str) -> Vec<Statement> {
    let mut found: Vec<Statement> = Vec::new();
    // Which list the `- item` lines belong to, and at what indent its key was.
    let mut list: Option<(&str, usize)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if trimmed.starts_with('#') || trimmed.is_empty() {
            continue;
        }
        if trimmed == "- Effect: Allow" {
            found.push(Statement {
                policy: policy.to_owned(),
                actions: Vec::new(),
                resources: Vec::new(),
            });
            list = None;
            continue;
        }
        let Some(current) = found.last_mut() else { continue };
        if let Some((key, at)) = list {
            if indent > at && trimmed.starts_with("- ") {
                let item = trimmed.trim_start_matches("- ");
                match key {
                    "Action" => current.actions.push(item.to_owned()),
                    _ if current.resources.contains(&resource(item)) => {}
                    _ => current.resources.push(resource(item)),
                }
                continue;
            }
            list = None;
        }
        for key in ["Action", "Resource"] {
            if let Some(value) = trimmed.strip_prefix(&format!("{key}:")) {
                let value = value.trim();
                match (key, value.is_empty()) {
                    (_, true) => list = Some((key, indent)),
                    ("Action", false) => current.actions.push(value.to_owned()),
                    (_, false) => current.resources.push(resource(value)),
                }
            }
        }
    }
    found
}

/// Every `Allow` statement `function` (`TickFunction`) is granted: its own, and those of the
/// managed policies it names (`- !Ref XPolicy`).
pub fn grants(template: &str, function: &str) -> Vec<Statement> {
    let blocks = resources(template);
    let block = |name: &str| named(&blocks, name);
    let own = block(function);
    let policies = own.split("\n      Policies:\n").nth(1).unwrap_or_default();
    let policies = policies.split("\n      Events:\n").next().unwrap_or_default();
    let mut found = statements(policies, "inline");
    for line in policies.lines() {
        if let Some(name) = line.trim().strip_prefix("- !Ref ") {
            found.extend(statements(&block(name), name));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_ticks_grants_are_read_as_written() {
        let tick = super::grants(super::TEMPLATE, "TickFunction");
        assert!(tick.iter().any(|s| s.allows("dynamodb:Query", "index/GSI1")), "{tick:?}");
        assert!(!tick.iter().any(|s| s.allows("dynamodb:Query", "index/GSI2")), "{tick:?}");
        assert!(!tick.iter().any(|s| s.allows("dynamodb:DeleteItem", "table")), "{tick:?}");
        let api = super::grants(super::TEMPLATE, "ApiFunction");
        assert!(
            api.iter()
                .any(|s| s.policy == "OwnerSurfacePolicy" && s.allows("sqs:SendMessage", "ExecuteQueue"))
        );
        assert!(
            api.iter().any(|s| s.allows("dynamodb:Query", "index/GSI2")),
            "index/* covers each index"
        );
    }
}
