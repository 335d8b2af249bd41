//! Which function is at work. In AWS each function signs its calls with its own role; here
//! every function runs in one process, and on the emulator each signs with an access key that
//! names it (`local-tick`, `local-api`, …), so what reaches the emulator says who asked, as
//! CloudTrail would. What the runtime itself asks (provisioning, the queue poller standing in
//! for Lambda's event sources) signs as `local-runtime`.

use std::future::Future;

use openloop_core::task::work::QueueName;

tokio::task_local! {
    static FUNCTION: &'static str;
}

/// The template's function for each name (`infra/template.yaml`'s `{Name}Function`).
pub const FUNCTIONS: [&str; 11] = [
    "webhooks",
    "api",
    "dashboard",
    "signals",
    "tick",
    "execute",
    "followup",
    "dormant",
    "attribution",
    "evaluation",
    "analysis",
];

/// Run `work` as function `name`: every AWS call it makes signs as that function. The work
/// is boxed, so a function's large future is not carried in its caller's stack frame.
pub async fn run_as<F: Future>(name: &'static str, work: F) -> F::Output {
    FUNCTION.scope(name, Box::pin(work)).await
}

/// The access key of the function at work, or the runtime's own.
pub fn access_key() -> String {
    format!("local-{}", FUNCTION.try_with(|f| *f).unwrap_or("runtime"))
}

/// The function a queue's event source invokes (the template's SQS events).
pub fn consumer(queue: QueueName) -> &'static str {
    match queue {
        QueueName::Signals | QueueName::Deliveries => "signals",
        QueueName::Execute => "execute",
        QueueName::Followup => "followup",
        QueueName::Dormant => "dormant",
    }
}

/// A router's every request handled as function `name` (API Gateway's route to it).
pub fn serve_as(name: &'static str, router: axum::Router) -> axum::Router {
    router.layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| run_as(name, next.run(request)),
    ))
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn the_access_key_names_the_function_at_work_and_the_runtime_outside_one() {
        assert_eq!(super::access_key(), "local-runtime");
        assert_eq!(super::run_as("tick", async { super::access_key() }).await, "local-tick");
        for queue in openloop_core::task::work::QueueName::ALL {
            assert!(super::FUNCTIONS.contains(&super::consumer(queue)), "{queue:?}");
        }
    }
}
