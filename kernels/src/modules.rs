// Host targets only (never nvptx64): the host crate's build.rs splits the production PTX with it, and the host
// loads each family's module on first use. The module docs are on `pub mod modules` in lib.rs.

use std::collections::HashMap;

use crate::interface::Kernel;

/// A kernel family: the kernels one host API needs, loaded together as one module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Family {
    /// `ntt_*`: transforms, bit reversal, twiddle tables, the Groth16 H steps.
    Ntt,
    /// `msm_*` kernels shared by both curves: digit counting, scans, the bucket sort.
    Msm,
    /// `msm_g1_*`: bucket accumulation and reduction on G1.
    MsmG1,
    /// `msm_g2_*`: the same on G2 (most of the PTX: Fq2 arithmetic fully inlined).
    MsmG2,
    /// `set_sum_g1_*`: sums of sets of G1 points (the MSM's bucket shares, batch addition's lane sums), apart
    /// so that an MSM does not compile batch addition's accumulation.
    SetSumG1,
    /// `set_sum_g2_*`.
    SetSumG2,
    /// `batch_add_*` kernels shared by both curves: scalar classification and bitmap compaction.
    BatchAdd,
    /// `batch_add_g1_*`.
    BatchAddG1,
    /// `batch_add_g2_*`.
    BatchAddG2,
    /// `bench_*` and `smoke_*`: micro-benchmarks, benchmark inputs and the smoke test, never needed by a prover.
    Bench,
}

impl Family {
    /// Every family, in the order the host's module table lists them.
    pub const ALL: [Family; 10] = [
        Family::Ntt,
        Family::Msm,
        Family::MsmG1,
        Family::MsmG2,
        Family::SetSumG1,
        Family::SetSumG2,
        Family::BatchAdd,
        Family::BatchAddG1,
        Family::BatchAddG2,
        Family::Bench,
    ];

    /// The families a prover uses (all but [`Family::Bench`], the last of [`Family::ALL`]): what a warm-up
    /// compiles.
    pub const PRODUCTION: &'static [Family] = Family::ALL.split_at(Family::ALL.len() - 1).0;

    /// The module's name in file names: `ntt`, `msm_g1`, ...
    pub const fn stem(self) -> &'static str {
        match self {
            Family::Ntt => "ntt",
            Family::Msm => "msm",
            Family::MsmG1 => "msm_g1",
            Family::MsmG2 => "msm_g2",
            Family::SetSumG1 => "set_sum_g1",
            Family::SetSumG2 => "set_sum_g2",
            Family::BatchAdd => "batch_add",
            Family::BatchAddG1 => "batch_add_g1",
            Family::BatchAddG2 => "batch_add_g2",
            Family::Bench => "bench",
        }
    }

    /// Position in [`Family::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The family of the production kernel named `entry`, by its prefix; `None` for a name no family claims
    /// (the split then fails, so a new kernel must be given a family before it ships).
    pub fn of(entry: &str) -> Option<Family> {
        // Longest prefixes first: `msm_g1_` before `msm_`.
        const PREFIXES: [(&str, Family); 11] = [
            ("msm_g1_", Family::MsmG1),
            ("msm_g2_", Family::MsmG2),
            ("msm_", Family::Msm),
            ("set_sum_g1_", Family::SetSumG1),
            ("set_sum_g2_", Family::SetSumG2),
            ("batch_add_g1_", Family::BatchAddG1),
            ("batch_add_g2_", Family::BatchAddG2),
            ("batch_add_", Family::BatchAdd),
            ("ntt_", Family::Ntt),
            ("bench_", Family::Bench),
            ("smoke_", Family::Bench),
        ];
        PREFIXES.iter().find(|(prefix, _)| entry.starts_with(prefix)).map(|&(_, family)| family)
    }
}

/// FNV-1a (64-bit) of `bytes`: the fingerprint that names a module's prebuilt cubin (the host's
/// `module::cubin_file_name`, `cargo xtask bundle`) and keys build.rs's cache of assembled SASS. Not
/// cryptographic: it tells apart texts, nobody forges them.
pub fn fingerprint(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// A device architecture to embed SASS for, and the PTX it is assembled from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SassTarget {
    /// (major, minor): the SASS runs on exactly this architecture.
    pub compute_capability: (u32, u32),
    /// `sm_90` for 9.0 and later, `sm_80` for 8.x: the modules the host picks for such a device.
    pub ptx_arch: &'static str,
}

/// The SASS targets named by `ZKGPU_SASS` (build.rs), e.g. `sm_80,sm_86,sm_89,sm_90`. Empty: none. Duplicates
/// are dropped.
pub fn sass_targets(spec: &str) -> Result<Vec<SassTarget>, String> {
    let mut targets = Vec::new();
    for name in spec.split(',').map(str::trim).filter(|name| !name.is_empty()) {
        let digits = name.strip_prefix("sm_").filter(|d| (2..=3).contains(&d.len()) && d.bytes().all(|b| b.is_ascii_digit()));
        let Some(digits) = digits else {
            return Err(format!("ZKGPU_SASS: {name:?} is not an architecture like sm_90"));
        };
        let (major, minor) = digits.split_at(digits.len() - 1);
        let cc: (u32, u32) = (major.parse().map_err(|_| format!("ZKGPU_SASS: {name:?}"))?, minor.parse().map_err(|_| format!("ZKGPU_SASS: {name:?}"))?);
        let ptx_arch = match cc.0 {
            9.. => "sm_90",
            8 => "sm_80",
            _ => return Err(format!("ZKGPU_SASS: {name}: the kernels need sm_80 or later")),
        };
        if !targets.iter().any(|t: &SassTarget| t.compute_capability == cc) {
            targets.push(SassTarget { compute_capability: cc, ptx_arch });
        }
    }
    Ok(targets)
}

impl Kernel {
    /// The family (module) this kernel is loaded with.
    pub fn family(&self) -> Option<Family> {
        Family::of(self.name)
    }
}

/// One top-level item of a PTX module: a declaration (`.global`, `.const`, `.extern`, a `.func` prototype) or a
/// definition (`.func` or `.entry` with a body), with any comment lines just above it.
struct Item<'a> {
    /// The symbol it declares or defines (`None` for what declares nothing, e.g. a stray directive).
    name: Option<&'a str>,
    /// `Some(entry name)` for a `.entry`.
    entry: Option<&'a str>,
    text: &'a str,
}

/// Splits a production PTX module into one self-contained module per [`Family`]: the module's header
/// (`.version`, `.target`, `.address_size`), then the family's `.entry` kernels with every `.func`, `.global`,
/// `.const` and `.extern` they reach (directly or through each other), in the original order. The SASS of a
/// kernel does not depend on what else its module holds: ptxas compiles each entry with the functions it calls.
///
/// Fails when an entry belongs to no family, when a family has no kernel, or when the text is not PTX this
/// parser understands (unbalanced braces, no header).
pub fn split(ptx: &str) -> Result<Vec<(Family, String)>, String> {
    let (header, items) = parse(ptx)?;
    let by_name: HashMap<&str, Vec<usize>> = items.iter().enumerate().fold(HashMap::new(), |mut map, (i, item)| {
        if let Some(name) = item.name {
            map.entry(name).or_default().push(i);
        }
        map
    });
    // Item -> items it mentions (by symbol name).
    let references: Vec<Vec<usize>> = items
        .iter()
        .map(|item| {
            let mut refs: Vec<usize> = identifiers(item.text)
                .filter(|&id| Some(id) != item.name)
                .filter_map(|id| by_name.get(id))
                .flatten()
                .copied()
                .collect();
            refs.sort_unstable();
            refs.dedup();
            refs
        })
        .collect();

    let mut roots: HashMap<Family, Vec<usize>> = HashMap::new();
    for (i, item) in items.iter().enumerate() {
        if let Some(entry) = item.entry {
            let family = Family::of(entry).ok_or_else(|| format!("kernel {entry}: no family claims this name"))?;
            roots.entry(family).or_default().push(i);
        }
    }
    let mut modules = Vec::new();
    for family in Family::ALL {
        let Some(family_roots) = roots.get(&family) else {
            return Err(format!("family {}: no kernel in the PTX", family.stem()));
        };
        // The closure of the family's entries under `references`, plus every declaration of a symbol it holds
        // (a `.func` prototype as well as its definition).
        let mut keep = vec![false; items.len()];
        let mut stack = family_roots.clone();
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut keep[i], true) {
                continue;
            }
            stack.extend(references[i].iter().copied().filter(|&j| !keep[j]));
            if let Some(name) = items[i].name {
                stack.extend(by_name[name].iter().copied().filter(|&j| !keep[j]));
            }
        }
        let mut text = String::from(header);
        for (item, _) in items.iter().zip(&keep).filter(|(_, kept)| **kept) {
            text.push_str(item.text);
        }
        modules.push((family, text));
    }
    Ok(modules)
}

/// The header (everything before the first item, `.address_size` included) and the top-level items.
fn parse(ptx: &str) -> Result<(&str, Vec<Item<'_>>), String> {
    let header_end = ptx
        .find(".address_size")
        .and_then(|at| ptx[at..].find('\n').map(|nl| at + nl + 1))
        .ok_or("no .address_size directive: not a PTX module")?;
    let (header, body) = ptx.split_at(header_end);

    let mut items = Vec::new();
    let mut depth = 0usize;
    // Byte offset in `body` where the item being read starts: blank and comment lines above an item belong to
    // it, so that the modules keep the text as rustc wrote it.
    let mut start: Option<usize> = None;
    let mut offset = 0;
    for line in body.split_inclusive('\n') {
        let line_start = offset;
        offset += line.len();
        start.get_or_insert(line_start);
        let code = code_of(line).trim();
        if depth == 0 && code.is_empty() {
            continue;
        }
        for c in code.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth = depth.checked_sub(1).ok_or("unbalanced braces: `}` at the top level")?,
                _ => {}
            }
        }
        if depth == 0
            && (code.ends_with(';') || code.ends_with('}'))
            && let Some(from) = start.take()
        {
            items.push(item(&body[from..offset]));
        }
    }
    if depth != 0 {
        return Err("unbalanced braces: the module ends inside a body".into());
    }
    if let Some(from) = start.filter(|&from| !body[from..].lines().all(|line| code_of(line).trim().is_empty())) {
        return Err(format!("unterminated item at the end of the module: {:.80}", body[from..].trim()));
    }
    Ok((header, items))
}

/// A line without its `//` comment.
fn code_of(line: &str) -> &str {
    line.split("//").next().unwrap_or("")
}

/// What one item declares: its symbol name and whether it is an entry.
fn item(text: &str) -> Item<'_> {
    let code = || text.lines().map(code_of).collect::<Vec<_>>().join(" ");
    let code = code();
    let mut tokens = code.split_whitespace();
    let Some(directive) = tokens.find(|t| [".func", ".entry", ".global", ".const", ".extern"].contains(t)) else {
        return Item { name: None, entry: None, text };
    };
    // The name's position within `text` (the item borrows from the module's text, not from `code`).
    let name = match directive {
        // `.func name(`, `.func (.param .b8 func_retval0[48]) name(`, `.visible .entry name(`.
        ".func" | ".entry" => {
            let rest = code.split_once(directive).map_or("", |(_, rest)| rest).trim_start();
            let rest = match rest.strip_prefix('(') {
                Some(retval) => retval.split_once(')').map_or("", |(_, rest)| rest).trim_start(),
                None => rest,
            };
            rest.split(|c: char| !is_identifier_char(c)).next().filter(|name| !name.is_empty())
        }
        // `.global .align 8 .b8 name[192] = {...};`, `.const .align 4 .b32 name = 1;`,
        // `.extern .shared .align 16 .b8 name[];`: the last token before `[`, `=` or `;`.
        _ => code.split(['[', '=', ';']).next().and_then(|decl| decl.split_whitespace().last()),
    };
    // Re-borrow the name from `text` (every code character of `code` is in `text`).
    let name = name.and_then(|name| {
        text.match_indices(name)
            .map(|(at, _)| &text[at..at + name.len()])
            .next()
            .filter(|name| !name.starts_with('.'))
    });
    let entry = if directive == ".entry" { name } else { None };
    Item { name, entry, text }
}

fn is_identifier_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '$'
}

/// The identifier-like tokens of `text` (PTX symbols: letters, digits, `_`, `$`).
fn identifiers(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !is_identifier_char(c)).filter(|t| t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "//
// Generated by LLVM NVPTX Back-End
//

.version 7.8
.target sm_90
.address_size 64

.const .align 4 .b32 inv_a = 0xffffffff;
.const .align 4 .b32 inv_b = 0xfffcfffd;

.func helper
(
\t.param .b64 helper_param_0
)
;
.func never_called
()
.noreturn;
.global .align 8 .b8 table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
.global .align 8 .u64 table_ref[1] = {generic(table)};
.extern .shared .align 16 .b8 dynamic_smem[];
.func helper(
\t.param .b64 helper_param_0
)
{
\t{ // callseq 1, 0
\tld.const.u32 %r1, [inv_b];
\t}
\tret;
}
.func  (.param .align 16 .b8 func_retval0[48]) returns_value(
\t.param .b64 returns_value_param_0
)
{
\tret;
}
\t// .globl\tntt_pass
.visible .entry ntt_pass(
\t.param .u64 .ptr .align 1 ntt_pass_param_0
)
.maxnreg 128
{
\tcall.uni helper, (%rd1);
\tmov.u64 %rd2, table_ref;
\tret;
}
\t// .globl\tmsm_g1_accumulate
.visible .entry msm_g1_accumulate(
\t.param .u64 .ptr .align 1 msm_g1_accumulate_param_0
)
{
\tld.shared.u32 %r1, [dynamic_smem];
\tcall.uni (retval0), returns_value, (%rd1);
\tld.const.u32 %r2, [inv_a];
\tret;
}
";

    /// A minimal module for every family but the two above, so that `split` has a kernel for each.
    fn with_other_families(ptx: &str) -> String {
        let mut text = ptx.to_string();
        for entry in ["msm_count", "msm_g2_fold", "batch_add_compact", "batch_add_g1_reduce", "batch_add_g2_reduce", "set_sum_g1_reduce", "set_sum_g2_finish", "bench_mul"] {
            text.push_str(&format!(".visible .entry {entry}()\n{{\n\tret;\n}}\n"));
        }
        text
    }

    fn module(modules: &[(Family, String)], family: Family) -> &str {
        &modules.iter().find(|(f, _)| *f == family).expect("every family has a module").1
    }

    #[test]
    fn sass_targets_parse() {
        assert_eq!(sass_targets(""), Ok(vec![]));
        let target = |major, minor, ptx_arch| SassTarget { compute_capability: (major, minor), ptx_arch };
        assert_eq!(
            sass_targets("sm_80, sm_86,sm_89,sm_90,sm_90,sm_100"),
            Ok(vec![
                target(8, 0, "sm_80"),
                target(8, 6, "sm_80"),
                target(8, 9, "sm_80"),
                target(9, 0, "sm_90"),
                target(10, 0, "sm_90")
            ])
        );
        for bad in ["sm_75", "90", "sm_9", "sm_9a", "compute_90", "sm_1000"] {
            assert!(sass_targets(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn families_by_prefix() {
        assert_eq!(Family::of("msm_g1_accumulate"), Some(Family::MsmG1));
        assert_eq!(Family::of("msm_g2_reduce"), Some(Family::MsmG2));
        assert_eq!(Family::of("msm_sort_upsweep"), Some(Family::Msm));
        assert_eq!(Family::of("batch_add_g2_affine_level"), Some(Family::BatchAddG2));
        assert_eq!(Family::of("set_sum_g1_finish"), Some(Family::SetSumG1));
        assert_eq!(Family::of("set_sum_g2_reduce"), Some(Family::SetSumG2));
        assert_eq!(Family::of("bench_batch_add_g1_expand"), Some(Family::Bench));
        assert_eq!(Family::of("batch_add_count_chunks"), Some(Family::BatchAdd));
        assert_eq!(Family::of("ntt_pass_dif"), Some(Family::Ntt));
        assert_eq!(Family::of("smoke_add_u32"), Some(Family::Bench));
        assert_eq!(Family::of("arith_fq_mul"), None);
        for (i, family) in Family::ALL.iter().enumerate() {
            assert_eq!(family.index(), i);
        }
        assert!(Family::PRODUCTION.iter().all(|f| *f != Family::Bench));
    }

    /// Every kernel of the typed interface has a family, a production one unless it is a benchmark helper.
    #[test]
    fn interface_kernels_have_families() {
        for kernel in crate::interface::kernels() {
            let family = kernel.family().unwrap_or_else(|| panic!("{} has no family", kernel.name));
            assert_eq!(family == Family::Bench, kernel.name.starts_with("bench_"), "{}", kernel.name);
        }
    }

    #[test]
    fn each_module_holds_its_kernels_and_what_they_reach() {
        let modules = split(&with_other_families(PTX)).expect("splits");
        assert_eq!(modules.iter().map(|(f, _)| *f).collect::<Vec<_>>(), Family::ALL);
        let ntt = module(&modules, Family::Ntt);
        assert!(ntt.starts_with("//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 7.8\n.target sm_90\n.address_size 64\n"));
        // The entry, the function it calls (prototype and definition), the constant that function reads, the
        // global it takes the address of and the global that one points to; nothing of msm_g1_accumulate.
        for wanted in ["ntt_pass(", ".maxnreg 128", "// .globl\tntt_pass", ".func helper\n(", ".func helper(", "inv_b =", "table[8]", "table_ref[1]"] {
            assert!(ntt.contains(wanted), "ntt module lacks {wanted:?}:\n{ntt}");
        }
        for unwanted in ["msm_g1_accumulate", "returns_value", "dynamic_smem", "inv_a", "never_called", "msm_count"] {
            assert!(!ntt.contains(unwanted), "ntt module holds {unwanted:?}:\n{ntt}");
        }
        let msm = module(&modules, Family::MsmG1);
        for wanted in ["msm_g1_accumulate(", "returns_value(", "func_retval0[48]", "dynamic_smem[]", "inv_a ="] {
            assert!(msm.contains(wanted), "msm_g1 module lacks {wanted:?}:\n{msm}");
        }
        for unwanted in ["ntt_pass", "helper", "table", "inv_b"] {
            assert!(!msm.contains(unwanted), "msm_g1 module holds {unwanted:?}:\n{msm}");
        }
        assert!(module(&modules, Family::Bench).contains(".visible .entry bench_mul()"));
    }

    #[test]
    fn rejects_what_it_cannot_split() {
        let orphan = with_other_families(PTX).replace("ntt_pass", "mystery_pass");
        assert_eq!(split(&orphan).unwrap_err(), "kernel mystery_pass: no family claims this name");
        // (Without the other families' kernels, `msm` has none.)
        assert_eq!(split(PTX).unwrap_err(), "family msm: no kernel in the PTX");
        assert!(split("no header").unwrap_err().contains("not a PTX module"));
        let unbalanced = with_other_families(PTX).replacen("\tret;\n}\n", "\tret;\n", 1);
        assert!(split(&unbalanced).unwrap_err().contains("unbalanced braces"));
        let extra = with_other_families(PTX) + "}\n";
        assert!(split(&extra).unwrap_err().contains("unbalanced braces"));
    }

    /// The committed production modules split: every entry lands in exactly one module, every module is a
    /// strict part of the whole, and the kernels of the typed interface are where their family says.
    #[test]
    fn committed_ptx_splits() {
        for arch in crate::committed::ARCHES {
            let path = crate::committed::path(arch).display().to_string();
            let ptx = crate::committed::read(arch).unwrap_or_else(|e| panic!("{e}"));
            let modules = split(&ptx).unwrap_or_else(|e| panic!("{path}: {e}"));
            let whole: Vec<&str> = crate::interface::ptx_entries(&ptx).into_iter().map(|(name, _)| name).collect();
            let mut seen = Vec::new();
            for (family, text) in &modules {
                assert!(text.len() < ptx.len(), "{arch} {}: the module is the whole PTX", family.stem());
                for (name, _) in crate::interface::ptx_entries(text) {
                    assert_eq!(Family::of(name), Some(*family), "{arch}: {name} in module {}", family.stem());
                    seen.push(name);
                }
            }
            seen.sort_unstable();
            let mut expected = whole.clone();
            expected.sort_unstable();
            assert_eq!(seen, expected, "{arch}: the modules' entries are not the whole module's");
            for kernel in crate::interface::kernels() {
                let family = kernel.family().expect("interface kernels have families");
                let text = module(&modules, family);
                assert!(crate::interface::check_ptx(text, &[kernel]).is_ok(), "{arch}: {} not in {}", kernel.name, family.stem());
            }
        }
    }
}
