//! The host's one way to take a lock: every structure it guards with a
//! `Mutex` (sessions, running calls, questions, watches, the process's
//! records) is locked through [`lock`], so a panic in one call never makes
//! the structure unusable for the others.

use std::sync::{Mutex, MutexGuard};

/// Locks `mutex`, carrying on after a panic elsewhere: every structure the
/// host guards stays consistent between statements.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
