//! The runtime's own tests: the pool, and the embedded image.

mod slots {
    use super::super::*;

    /// A runtime for the built-in component with a pool of `slots`.
    fn pooled(slots: u32) -> Runtime {
        let mut config = engine::config();
        let limits = Limits::read(|_| None).unwrap();
        pool::configure(&mut config, slots, limits.memory_mib);
        let pooled = Source::BuiltIn.ready(config).unwrap();
        Runtime::new(Source::BuiltIn, pooled, Vec::new(), &limits)
    }

    #[tokio::test]
    async fn past_the_pool_messages_run_in_fresh_instances() {
        let runtime = pooled(2);
        let engine = &runtime.pooled.engine;
        let mut running = Vec::new();
        for _ in 0..2 {
            let mut store = runtime.store(engine, Grants::default()).unwrap();
            runtime
                .pooled
                .pre
                .instantiate_async(&mut store)
                .await
                .unwrap();
            running.push(store);
        }
        let mut third = runtime.store(engine, Grants::default()).unwrap();
        let refused = runtime.pooled.pre.instantiate_async(&mut third).await;
        assert!(
            refused.as_ref().is_err_and(pool::full),
            "a third slot in a pool of two"
        );
        assert!(
            runtime.overflow.get().is_none(),
            "made ready only when needed"
        );
        let memory = runtime
            .with_instance(Grants::default(), async |_, store| {
                Ok(store.data().limits.peak)
            })
            .await
            .unwrap();
        assert!(memory > 0, "the instance took its memory from the budget");
        assert!(runtime.overflow.get().is_some_and(Result::is_ok));
    }
}

#[cfg(feature = "compiler")]
mod image {
    use super::super::*;

    /// The component, compiled by this test for the test machine.
    fn compiled(config: &wasmtime::Config) -> Vec<u8> {
        let wasm = std::fs::read(env!("GUEST_WASM")).unwrap();
        Engine::new(config)
            .unwrap()
            .precompile_component(&wasm)
            .unwrap()
    }

    #[test]
    fn the_embedded_image_loads_and_mismatched_images_never_do() {
        let engine = Engine::new(&engine::config()).unwrap();
        built_in(&engine, GUEST_IMAGE).expect("the image build.rs made loads");
        // Compiled under other settings (no fuel): refused, with the reason.
        let mut other = wasmtime::Config::new();
        other.max_wasm_stack(engine::MAX_WASM_STACK);
        let refusal = built_in(&engine, &compiled(&other))
            .err()
            .unwrap()
            .to_string();
        assert!(refusal.contains("this binary is broken"), "{refusal}");
        assert!(refusal.contains("fuel"), "{refusal}");
        // Not wasmtime's output at all.
        assert!(built_in(&engine, b"\0asm not a compiled component").is_err());
        let mut truncated = GUEST_IMAGE.to_vec();
        truncated.truncate(truncated.len() / 2);
        assert!(built_in(&engine, &truncated).is_err());
    }
}
