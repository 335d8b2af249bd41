//! The tokio runtime of the binaries that run the engine on spawned tasks (`openloop-local`,
//! the benches): worker threads with 8 MiB stacks. A debug build keeps every await point's
//! state on the stack, and the engine's deepest futures — a step that drafts, reserves,
//! sends, tells the owner and queues a webhook — outgrow tokio's 2 MiB there. (A Lambda's
//! handler runs on its main thread, which has the system's 8 MiB.)

/// The stack of each worker thread.
pub const WORKER_STACK_BYTES: usize = 8 << 20;

/// A multi-threaded runtime with every driver on and [`WORKER_STACK_BYTES`] per worker.
pub fn build() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(WORKER_STACK_BYTES)
        .build()
}
