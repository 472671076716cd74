//! `symbol_at` on cursor-marked fixtures: identifiers, qualified names, aliases, templates,
//! members, macros, keywords and PTX mnemonics.

use expect_test::{expect, Expect};
use kernaut_syntax::{SourceFile, SymbolKind};
use kernaut_test_utils::Fixture;

fn check(fixture: &str, expect: Expect) {
    let fixture = Fixture::parse(fixture);
    let file = fixture.single();
    let source = SourceFile::parse(&file.text);
    let offset = file.cursor.expect("fixture has a cursor");
    let actual = match source.symbol_at(offset) {
        None => "none".to_string(),
        Some(s) => {
            let kind = match &s.kind {
                SymbolKind::Member {
                    receiver,
                    receiver_type,
                } => format!(
                    "Member(receiver={receiver}, type={})",
                    receiver_type.as_deref().unwrap_or("?")
                ),
                other => format!("{other:?}"),
            };
            let mut line = format!(
                "{kind} {} `{}` at `{}`",
                s.name,
                s.text,
                &file.text[s.range.clone()]
            );
            if let Some(t) = &s.template_args {
                line.push_str(&format!(" <{t}>"));
            }
            if s.candidates.len() > 1 {
                line.push_str(&format!(" candidates={:?}", s.candidates));
            }
            if s.is_call {
                line.push_str(" call");
            }
            line
        }
    };
    expect.assert_eq(&actual);
}

#[test]
fn plain_identifier_call() {
    check(
        "__device__ void f() { __shf$0l_sync(0xffffffff, v, 0); }",
        expect!["Identifier __shfl_sync `__shfl_sync` at `__shfl_sync` call"],
    );
}

#[test]
fn cursor_at_word_end() {
    check(
        "__device__ void f() { __syncwarp$0(); }",
        expect!["Identifier __syncwarp `__syncwarp` at `__syncwarp` call"],
    );
}

#[test]
fn local_variable() {
    check(
        "__global__ void k() { int acc = 0; ac$0c += 1; }",
        expect!["Identifier acc `acc` at `acc`"],
    );
}

#[test]
fn type_identifier() {
    check(
        "__global__ void k() { flo$0at4 v; }",
        expect!["Identifier float4 `float4` at `float4`"],
    );
}

#[test]
fn qualified_function() {
    check(
        "__global__ void k() { cuda::memcpy_a$0sync(dst, src, n, pipe); }",
        expect!["Qualified cuda::memcpy_async `cuda::memcpy_async` at `cuda::memcpy_async` call"],
    );
}

#[test]
fn qualified_cursor_on_namespace() {
    check(
        "__global__ void k() { cu$0da::memcpy_async(dst, src, n, pipe); }",
        expect!["Qualified cuda::memcpy_async `cuda::memcpy_async` at `cuda::memcpy_async` call"],
    );
}

#[test]
fn three_part_qualified_name() {
    check("__global__ void k() { nvcuda::wmma::mma_s$0ync(c, a, b, c); }", expect!["Qualified nvcuda::wmma::mma_sync `nvcuda::wmma::mma_sync` at `nvcuda::wmma::mma_sync` call"]);
}

#[test]
fn global_scope_qualified() {
    check(
        "__global__ void k() { ::__syncw$0arp(); }",
        expect!["Identifier __syncwarp `::__syncwarp` at `::__syncwarp` call"],
    );
}

#[test]
fn namespace_alias_expanded() {
    check(
        r#"
        namespace cg = cooperative_groups;
        __global__ void k() { cg::invoke_o$0ne(tile, f); }
        "#,
        expect![
            "Qualified cooperative_groups::invoke_one `cg::invoke_one` at `cg::invoke_one` call"
        ],
    );
}

#[test]
fn namespace_alias_inside_function() {
    check(
        r#"
        __global__ void k() {
            namespace cg = cooperative_groups;
            cg::sy$0nc(cg::this_thread_block());
        }
        "#,
        expect!["Qualified cooperative_groups::sync `cg::sync` at `cg::sync` call"],
    );
}

#[test]
fn namespace_alias_out_of_scope() {
    check(
        r#"
        __device__ void a() { namespace cg = cooperative_groups; }
        __global__ void k() { cg::sy$0nc(g); }
        "#,
        expect!["Qualified cg::sync `cg::sync` at `cg::sync` call"],
    );
}

#[test]
fn nested_alias() {
    check(
        r#"
        namespace wm = nvcuda::wmma;
        __global__ void k() { wm::load_matrix_s$0ync(a, p, 16); }
        "#,
        expect!["Qualified nvcuda::wmma::load_matrix_sync `wm::load_matrix_sync` at `wm::load_matrix_sync` call"],
    );
}

#[test]
fn alias_of_alias() {
    check(
        r#"
        namespace cg = cooperative_groups;
        namespace g2 = cg;
        __global__ void k() { g2::this_g$0rid(); }
        "#,
        expect!["Qualified cooperative_groups::this_grid `g2::this_grid` at `g2::this_grid` call"],
    );
}

#[test]
fn using_namespace_gives_candidates() {
    check(
        r#"
        using namespace nvcuda;
        __global__ void k() { wmma::fill_frag$0ment(c, 0.0f); }
        "#,
        expect![[
            r#"Qualified wmma::fill_fragment `wmma::fill_fragment` at `wmma::fill_fragment` candidates=["wmma::fill_fragment", "nvcuda::wmma::fill_fragment"] call"#
        ]],
    );
}

#[test]
fn using_namespace_inside_function() {
    check(
        r#"
        __global__ void k() {
            using namespace cooperative_groups;
            thread_block b = this_thread_bl$0ock();
        }
        "#,
        expect![[
            r#"Identifier this_thread_block `this_thread_block` at `this_thread_block` candidates=["this_thread_block", "cooperative_groups::this_thread_block"] call"#
        ]],
    );
}

#[test]
fn using_namespace_alias() {
    check(
        r#"
        namespace cg = cooperative_groups;
        using namespace cg;
        __global__ void k() { grid_group g = this_gr$0id(); }
        "#,
        expect![[
            r#"Identifier this_grid `this_grid` at `this_grid` candidates=["this_grid", "cooperative_groups::this_grid"] call"#
        ]],
    );
}

#[test]
fn template_function_call() {
    check(
        "template <int N> __global__ void k() { cuda::pipeline_consumer_wait_pr$0ior<N - 1>(pipe); }",
        expect!["Qualified cuda::pipeline_consumer_wait_prior `cuda::pipeline_consumer_wait_prior` at `cuda::pipeline_consumer_wait_prior` <N - 1> call"],
    );
}

#[test]
fn template_argument_is_its_own_symbol() {
    check(
        "template <int N> __global__ void k() { cuda::pipeline_consumer_wait_prior<N$0 - 1>(pipe); }",
        expect!["Identifier N `N` at `N`"],
    );
}

#[test]
fn template_type() {
    check(
        "__global__ void k() { __shared__ cuda::bar$0rier<cuda::thread_scope_block> bar; }",
        expect![
            "Qualified cuda::barrier `cuda::barrier` at `cuda::barrier` <cuda::thread_scope_block>"
        ],
    );
}

#[test]
fn template_type_argument() {
    check(
        "__global__ void k() { __shared__ cuda::barrier<cuda::thread_sco$0pe_block> bar; }",
        expect!["Qualified cuda::thread_scope_block `cuda::thread_scope_block` at `cuda::thread_scope_block`"],
    );
}

#[test]
fn tiled_partition_template() {
    check(
        "namespace cg = cooperative_groups;\n__global__ void k() { auto t = cg::tiled_par$0tition<32>(cg::this_thread_block()); }",
        expect!["Qualified cooperative_groups::tiled_partition `cg::tiled_partition` at `cg::tiled_partition` <32> call"],
    );
}

#[test]
fn wmma_fragment_type() {
    check(
        "__global__ void k() { nvcuda::wmma::frag$0ment<nvcuda::wmma::matrix_a, 16, 16, 16, half, nvcuda::wmma::row_major> a; }",
        expect!["Qualified nvcuda::wmma::fragment `nvcuda::wmma::fragment` at `nvcuda::wmma::fragment` <nvcuda::wmma::matrix_a, 16, 16, 16, half, nvcuda::wmma::row_major>"],
    );
}

#[test]
fn member_call_pipeline_declared_type() {
    check(
        r#"
        __global__ void k() {
            cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
            pipe.producer_com$0mit();
        }
        "#,
        expect![[
            r#"Member(receiver=pipe, type=cuda::pipeline) cuda::pipeline::producer_commit `pipe.producer_commit` at `pipe.producer_commit` candidates=["cuda::pipeline::producer_commit", "producer_commit"] call"#
        ]],
    );
}

#[test]
fn member_call_auto_pipeline() {
    check(
        r#"
        __global__ void k() {
            auto pipe = cuda::make_pipeline();
            pipe.consumer_wa$0it();
        }
        "#,
        expect![[
            r#"Member(receiver=pipe, type=cuda::pipeline) cuda::pipeline::consumer_wait `pipe.consumer_wait` at `pipe.consumer_wait` candidates=["cuda::pipeline::consumer_wait", "consumer_wait"] call"#
        ]],
    );
}

#[test]
fn member_call_thread_block() {
    check(
        r#"
        namespace cg = cooperative_groups;
        __global__ void k() {
            auto block = cg::this_thread_block();
            block.sy$0nc();
        }
        "#,
        expect![[
            r#"Member(receiver=block, type=cooperative_groups::thread_block) cooperative_groups::thread_block::sync `block.sync` at `block.sync` candidates=["cooperative_groups::thread_block::sync", "sync"] call"#
        ]],
    );
}

#[test]
fn member_call_cursor_on_receiver_is_variable() {
    check(
        r#"
        namespace cg = cooperative_groups;
        __global__ void k() {
            auto block = cg::this_thread_block();
            blo$0ck.sync();
        }
        "#,
        expect!["Identifier block `block` at `block`"],
    );
}

#[test]
fn member_call_tile() {
    check(
        r#"
        namespace cg = cooperative_groups;
        __global__ void k() {
            auto tile = cg::tiled_partition<32>(cg::this_thread_block());
            float v = tile.shfl_do$0wn(x, 16);
        }
        "#,
        expect![[
            r#"Member(receiver=tile, type=cooperative_groups::thread_block_tile) cooperative_groups::thread_block_tile::shfl_down `tile.shfl_down` at `tile.shfl_down` candidates=["cooperative_groups::thread_block_tile::shfl_down", "shfl_down"] call"#
        ]],
    );
}

#[test]
fn member_call_declared_tile_type() {
    check(
        r#"
        namespace cg = cooperative_groups;
        __global__ void k() {
            cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
            tile.sy$0nc();
        }
        "#,
        expect![[
            r#"Member(receiver=tile, type=cooperative_groups::thread_block_tile) cooperative_groups::thread_block_tile::sync `tile.sync` at `tile.sync` candidates=["cooperative_groups::thread_block_tile::sync", "sync"] call"#
        ]],
    );
}

#[test]
fn member_call_grid() {
    check(
        r#"
        namespace cg = cooperative_groups;
        __global__ void k() {
            auto grid = cg::this_grid();
            grid.sy$0nc();
        }
        "#,
        expect![[
            r#"Member(receiver=grid, type=cooperative_groups::grid_group) cooperative_groups::grid_group::sync `grid.sync` at `grid.sync` candidates=["cooperative_groups::grid_group::sync", "sync"] call"#
        ]],
    );
}

#[test]
fn member_call_coalesced() {
    check(
        r#"
        __global__ void k() {
            auto active = cooperative_groups::coalesced_threads();
            int r = active.thread_ra$0nk();
        }
        "#,
        expect![[
            r#"Member(receiver=active, type=cooperative_groups::coalesced_group) cooperative_groups::coalesced_group::thread_rank `active.thread_rank` at `active.thread_rank` candidates=["cooperative_groups::coalesced_group::thread_rank", "thread_rank"] call"#
        ]],
    );
}

#[test]
fn member_call_on_call_receiver() {
    check(
        "namespace cg = cooperative_groups;\n__global__ void k() { cg::this_thread_block().s$0ync(); }",
        expect![[r#"Member(receiver=cg::this_thread_block(), type=cooperative_groups::thread_block) cooperative_groups::thread_block::sync `cg::this_thread_block().sync` at `cg::this_thread_block().sync` candidates=["cooperative_groups::thread_block::sync", "sync"] call"#]],
    );
}

#[test]
fn member_call_barrier_shared() {
    check(
        r#"
        __global__ void k() {
            __shared__ cuda::barrier<cuda::thread_scope_block> bar;
            auto token = bar.arri$0ve();
        }
        "#,
        expect![[
            r#"Member(receiver=bar, type=cuda::barrier) cuda::barrier::arrive `bar.arrive` at `bar.arrive` candidates=["cuda::barrier::arrive", "arrive"] call"#
        ]],
    );
}

#[test]
fn member_call_through_pointer_parameter() {
    check(
        "__device__ void f(cuda::barrier<cuda::thread_scope_block>* bar) { bar->arrive_and_w$0ait(); }",
        expect![[r#"Member(receiver=bar, type=cuda::barrier) cuda::barrier::arrive_and_wait `bar->arrive_and_wait` at `bar->arrive_and_wait` candidates=["cuda::barrier::arrive_and_wait", "arrive_and_wait"] call"#]],
    );
}

#[test]
fn member_call_reference_parameter() {
    check(
        "__device__ void f(cuda::pipeline<cuda::thread_scope_block>& pipe) { pipe.producer_acq$0uire(); }",
        expect![[r#"Member(receiver=pipe, type=cuda::pipeline) cuda::pipeline::producer_acquire `pipe.producer_acquire` at `pipe.producer_acquire` candidates=["cuda::pipeline::producer_acquire", "producer_acquire"] call"#]],
    );
}

#[test]
fn member_call_unknown_type() {
    check(
        "__global__ void k(Foo f) { q.fro$0b(); }",
        expect!["Member(receiver=q, type=?) frob `q.frob` at `q.frob` call"],
    );
}

#[test]
fn member_call_using_namespace_type() {
    check(
        r#"
        using namespace cooperative_groups;
        __global__ void k() {
            thread_block b = this_thread_block();
            b.sy$0nc();
        }
        "#,
        expect![[
            r#"Member(receiver=b, type=thread_block) thread_block::sync `b.sync` at `b.sync` candidates=["thread_block::sync", "cooperative_groups::thread_block::sync", "sync"] call"#
        ]],
    );
}

#[test]
fn member_field_not_call() {
    check(
        "__global__ void k() { int x = threadIdx.x$0; }",
        expect![[
            r#"Member(receiver=threadIdx, type=uint3) threadIdx.x `threadIdx.x` at `threadIdx.x` candidates=["threadIdx.x", "x"]"#
        ]],
    );
}

#[test]
fn builtin_variable() {
    check(
        "__global__ void k() { int x = thread$0Idx.x; }",
        expect!["Identifier threadIdx `threadIdx` at `threadIdx`"],
    );
}

#[test]
fn macro_syncthreads() {
    check(
        "__global__ void k() { __syncth$0reads(); }",
        expect!["Macro __syncthreads `__syncthreads` at `__syncthreads` call"],
    );
}

#[test]
fn macro_launch_bounds() {
    check(
        "__global__ void __launch_bo$0unds__(256, 2) k() {}",
        expect!["Macro __launch_bounds__ `__launch_bounds__` at `__launch_bounds__`"],
    );
}

#[test]
fn macro_defined_in_file() {
    check(
        "#define TILE_DIM 32\n__global__ void k() { __shared__ float t[TILE_D$0IM]; }",
        expect!["Macro TILE_DIM `TILE_DIM` at `TILE_DIM`"],
    );
}

#[test]
fn macro_definition_name() {
    check(
        "#define BLOCK_R$0OWS 8\n",
        expect!["Macro BLOCK_ROWS `BLOCK_ROWS` at `BLOCK_ROWS`"],
    );
}

#[test]
fn function_like_macro_use() {
    check(
        "#define CHECK(x) x\nvoid h() { CHE$0CK(cudaDeviceSynchronize()); }",
        expect!["Macro CHECK `CHECK` at `CHECK` call"],
    );
}

#[test]
fn macro_align_is_masked_but_found() {
    check(
        "struct __ali$0gn__(16) S { float a[4]; };",
        expect!["Macro __align__ `__align__` at `__align__`"],
    );
}

#[test]
fn macro_cluster_dims() {
    check(
        "__global__ void __cluster_d$0ims__(2, 1, 1) k() {}",
        expect!["Macro __cluster_dims__ `__cluster_dims__` at `__cluster_dims__`"],
    );
}

#[test]
fn cutlass_wrapper_macro() {
    check(
        "CUTLASS_DEV$0ICE void f() {}",
        expect!["Macro CUTLASS_DEVICE `CUTLASS_DEVICE` at `CUTLASS_DEVICE`"],
    );
}

#[test]
fn keyword_shared() {
    check(
        "__global__ void k() { __sha$0red__ float t[32]; }",
        expect!["Keyword __shared__ `__shared__` at `__shared__`"],
    );
}

#[test]
fn keyword_global() {
    check(
        "__glo$0bal__ void k() {}",
        expect!["Keyword __global__ `__global__` at `__global__`"],
    );
}

#[test]
fn keyword_device() {
    check(
        "__dev$0ice__ int f() { return 0; }",
        expect!["Keyword __device__ `__device__` at `__device__`"],
    );
}

#[test]
fn keyword_restrict() {
    check(
        "__global__ void k(float* __restr$0ict__ out) {}",
        expect!["Keyword __restrict__ `__restrict__` at `__restrict__`"],
    );
}

#[test]
fn keyword_forceinline() {
    check(
        "__device__ __forcein$0line__ int f() { return 0; }",
        expect!["Keyword __forceinline__ `__forceinline__` at `__forceinline__`"],
    );
}

#[test]
fn keyword_constant() {
    check(
        "__const$0ant__ float weights[64];",
        expect!["Keyword __constant__ `__constant__` at `__constant__`"],
    );
}

#[test]
fn keyword_grid_constant() {
    check(
        "__global__ void k(const __grid_cons$0tant__ CUtensorMap tm) {}",
        expect!["Keyword __grid_constant__ `__grid_constant__` at `__grid_constant__`"],
    );
}

#[test]
fn primitive_type_keyword() {
    check(
        "__global__ void k() { flo$0at x; }",
        expect!["Keyword float `float` at `float`"],
    );
}

#[test]
fn ptx_wait_group_on_suffix() {
    check(
        r#"__device__ void f() { asm volatile("cp.async.wait_gr$0oup %0;\n" :: "n"(1)); }"#,
        expect!["Ptx cp.async.wait_group `cp.async.wait_group` at `cp.async.wait_group`"],
    );
}

#[test]
fn ptx_cursor_at_start() {
    check(
        r#"__device__ void f() { asm volatile("$0cp.async.commit_group;\n" ::); }"#,
        expect!["Ptx cp.async.commit_group `cp.async.commit_group` at `cp.async.commit_group`"],
    );
}

#[test]
fn ptx_full_modifiers() {
    check(
        r#"__device__ void f() { asm volatile("cp.async.cg.shared.glo$0bal [%0], [%1], 16;\n" :: "r"(s), "l"(g)); }"#,
        expect!["Ptx cp.async.cg.shared.global `cp.async.cg.shared.global` at `cp.async.cg.shared.global`"],
    );
}

#[test]
fn ptx_cursor_on_operand() {
    check(
        r#"__device__ void f() { asm volatile("cp.async.wait_group %$00;\n" :: "n"(1)); }"#,
        expect!["Ptx cp.async.wait_group `cp.async.wait_group` at `cp.async.wait_group`"],
    );
}

#[test]
fn ptx_multiline_concatenation_second_line() {
    check(
        r#"
        __device__ void f() {
            asm volatile(
                "{\n"
                ".reg .pred p;\n"
                "setp.ne.b32 p, %0, 0;\n"
                "mbarrier.try_wait.parity.shared::cta.b64 $0p, [%1], %2;\n"
                "}\n" :: "r"(a), "r"(b), "r"(c));
        }
        "#,
        expect!["Ptx mbarrier.try_wait.parity.shared::cta.b64 `mbarrier.try_wait.parity.shared::cta.b64` at `mbarrier.try_wait.parity.shared::cta.b64`"],
    );
}

#[test]
fn ptx_mnemonic_split_from_operands_across_strings() {
    check(
        r#"
        __device__ void f() {
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                         "{%0,%1,%2,%3}, {%4$0,%5}, {%6}, {%7};\n" : "=f"(d0) : "r"(a));
        }
        "#,
        expect!["Ptx mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` at `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`"],
    );
}

#[test]
fn ptx_directive() {
    check(
        r#"__device__ void f() { asm("{\n .re$0g .b32 r;\n}" ::); }"#,
        expect!["Ptx .reg `.reg` at `.reg`"],
    );
}

#[test]
fn ptx_predicated_instruction() {
    check(
        r#"__device__ void f() { asm volatile("@p bra.un$0i DONE;\n" ::); }"#,
        expect!["Ptx bra.uni `bra.uni` at `bra.uni`"],
    );
}

#[test]
fn ptx_plain_asm() {
    check(
        r#"__device__ void f() { asm("membar.g$0l;"); }"#,
        expect!["Ptx membar.gl `membar.gl` at `membar.gl`"],
    );
}

#[test]
fn ptx_ldmatrix() {
    check(
        r#"__device__ void f() { asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4$0];\n" : "=r"(a) : "r"(p)); }"#,
        expect!["Ptx ldmatrix.sync.aligned.m8n8.x4.shared.b16 `ldmatrix.sync.aligned.m8n8.x4.shared.b16` at `ldmatrix.sync.aligned.m8n8.x4.shared.b16`"],
    );
}

#[test]
fn asm_constraint_is_not_ptx() {
    check(
        r#"__device__ void f() { asm volatile("cp.async.wait_group %0;\n" :: "n$0"(1)); }"#,
        expect!["none"],
    );
}

#[test]
fn asm_keyword() {
    check(
        r#"__device__ void f() { as$0m volatile("exit;"); }"#,
        expect!["Keyword asm `asm` at `asm`"],
    );
}

#[test]
fn ordinary_string_is_nothing() {
    check(
        r#"void h() { printf("cp.async.wa$0it_all"); }"#,
        expect!["none"],
    );
}

#[test]
fn whitespace_is_nothing() {
    check("__global__ void k() {   $0   }", expect!["none"]);
}

#[test]
fn number_is_nothing() {
    check("__global__ void k() { int x = 12$03; }", expect!["none"]);
}

#[test]
fn comment_is_nothing() {
    check("// __syncthr$0eads\n", expect!["none"]);
}

#[test]
fn kernel_name_in_definition() {
    check(
        "__global__ void trans$0pose(float* o) {}",
        expect!["Identifier transpose `transpose` at `transpose`"],
    );
}

#[test]
fn kernel_name_in_launch() {
    check(
        "void h() { trans$0pose<<<g, b>>>(o); }",
        expect!["Identifier transpose `transpose` at `transpose` call"],
    );
}

#[test]
fn templated_kernel_launch() {
    check(
        "void h() { gemm$0<float, 128><<<g, b, smem>>>(a, b, c); }",
        expect!["Identifier gemm `gemm` at `gemm` <float, 128> call"],
    );
}

#[test]
fn cuda_runtime_api() {
    check(
        "void h() { cudaFuncSetAttri$0bute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 1 << 16); }",
        expect!["Identifier cudaFuncSetAttribute `cudaFuncSetAttribute` at `cudaFuncSetAttribute` call"],
    );
}

#[test]
fn std_qualified_template() {
    check(
        "__device__ int f() { return cuda::std::m$0in<int>(a, b); }",
        expect!["Qualified cuda::std::min `cuda::std::min` at `cuda::std::min` <int> call"],
    );
}

#[test]
fn intrinsic_in_broken_code() {
    check(
        "__global__ void k() { if (x { __shfl_xor_s$0ync(m, v, 1); }",
        expect!["Identifier __shfl_xor_sync `__shfl_xor_sync` at `__shfl_xor_sync` call"],
    );
}

#[test]
fn member_after_masked_restrict_param() {
    check(
        "__global__ void k(const float* __restrict__ in) { cuda::memcpy_as$0ync(a, in, 16, pipe); }",
        expect!["Qualified cuda::memcpy_async `cuda::memcpy_async` at `cuda::memcpy_async` call"],
    );
}

#[test]
fn past_end_is_none() {
    let file = SourceFile::parse("int a;");
    assert_eq!(file.symbol_at(100), None);
}
