//! The sizes of CUDA's builtin types, and whether a name is one: below both the
//! expression tree (`expr`, which tells a cast from a parenthesised name) and constant
//! folding (`consteval`, `sizeof`).

/// The size in bytes of a builtin C or CUDA type, such as `float` (4), `__half` (2),
/// `__nv_bfloat16` (2), `float4` (16) or `double2` (16). Qualifiers (`const`, `volatile`,
/// `unsigned`) are ignored; pointers are 8 bytes. Returns `None` for any other type.
pub fn type_size(ty: &str) -> Option<u64> {
    let ty = ty.trim();
    if ty.ends_with('*') {
        return Some(8);
    }
    let words: Vec<&str> = ty
        .split(|c: char| c.is_whitespace())
        .filter(|w| !w.is_empty() && !matches!(*w, "const" | "volatile" | "signed" | "struct"))
        .collect();
    let base = match words.as_slice() {
        [] => return None,
        ["unsigned"] => "int",
        ["unsigned", rest @ ..] => return type_size(&rest.join(" ")),
        ["long", "long"] | ["long", "long", "int"] => "long long",
        ["long", "double"] => "long double",
        ["short", "int"] => "short",
        ["long", "int"] => "long",
        [one] => one,
        _ => return None,
    };
    let base = base.trim_start_matches("std::").trim_start_matches("::");
    Some(match base {
        "char" | "bool" | "int8_t" | "uint8_t" | "char1" | "uchar1" | "__nv_fp8_e4m3"
        | "__nv_fp8_e5m2" | "__nv_fp8_storage_t" => 1,
        "short" | "int16_t" | "uint16_t" | "half" | "__half" | "__nv_bfloat16" | "nv_bfloat16"
        | "char2" | "uchar2" | "short1" | "ushort1" | "__nv_fp8x2_e4m3" | "__nv_fp8x2_e5m2" => 2,
        "char3" | "uchar3" => 3,
        "int" | "float" | "int32_t" | "uint32_t" | "unsigned" | "half2" | "__half2"
        | "__nv_bfloat162" | "nv_bfloat162" | "char4" | "uchar4" | "short2" | "ushort2"
        | "int1" | "uint1" | "float1" | "uint" | "__nv_fp8x4_e4m3" | "__nv_fp8x4_e5m2" => 4,
        "short3" | "ushort3" => 6,
        "long" | "long long" | "double" | "int64_t" | "uint64_t" | "size_t" | "ptrdiff_t"
        | "float2" | "int2" | "uint2" | "short4" | "ushort4" | "double1" | "longlong1"
        | "ulonglong1" | "long1" | "ulong1" | "uint64" | "unsigned long long" => 8,
        "float3" | "int3" | "uint3" => 12,
        "float4" | "int4" | "uint4" | "double2" | "longlong2" | "ulonglong2" | "long double" => 16,
        "double3" | "longlong3" | "ulonglong3" => 24,
        "double4" | "longlong4" | "ulonglong4" => 32,
        _ => return None,
    })
}

/// Whether `name` is a builtin type name (used to tell a cast from a parenthesised name).
pub(crate) fn is_type_name(name: &str) -> bool {
    type_size(name).is_some() || matches!(name, "unsigned" | "signed" | "long" | "short")
}
