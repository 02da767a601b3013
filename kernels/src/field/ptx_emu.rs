//! A host interpreter for the small PTX subset our carry chains use, so the CPU tests run the exact
//! instruction text the GPU runs (same template, same operand numbering `{k}`).
//!
//! Supported: `mov`, `mul.{lo,hi}`, `mad{,c}.{lo,hi}{,.cc}`, `add{,c}{,.cc}`, `sub{,c}{,.cc}`, `and`, `or`,
//! `setp.{eq,ne}`, `selp`, on 32-bit values, with PTX's carry flag semantics (for subtraction the flag is the
//! borrow). Registers must be declared with `.reg` and written before they are read. The one memory read,
//! `ld.const.u32 %r, [zkgpu_inv_<value>]`, loads the constant-bank word that `asm::ptx_field` declares as
//! `.const .b32 zkgpu_inv_<value> = <value>`: the interpreter takes the value from the symbol's name.
use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

/// Why a PTX text could not be interpreted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PtxEmuError {
    /// The text uses something outside the supported subset, or is malformed.
    Parse { line: usize, message: String },
    /// A register was read before any instruction wrote it.
    Uninitialized { line: usize, register: String },
    /// An operand `{k}` is out of range for the inputs/outputs given.
    Operand { line: usize, index: usize },
}

impl fmt::Display for PtxEmuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PtxEmuError::Parse { line, message } => write!(f, "PTX line {line}: {message}"),
            PtxEmuError::Uninitialized { line, register } => write!(f, "PTX line {line}: {register} read before written"),
            PtxEmuError::Operand { line, index } => write!(f, "PTX line {line}: operand {{{index}}} out of range"),
        }
    }
}

impl std::error::Error for PtxEmuError {}

#[derive(Clone, Copy, Debug)]
enum Src {
    Reg(usize),
    Imm(u32),
    Operand(usize),
}

#[derive(Clone, Copy, Debug)]
enum Dst {
    Reg(usize),
    Operand(usize),
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Mov,
    Mul { hi: bool },
    Mad { hi: bool, carry_in: bool, carry_out: bool },
    Add { carry_in: bool, carry_out: bool },
    Sub { borrow_in: bool, borrow_out: bool },
    And,
    Or,
    Setp { equal: bool },
    Selp,
}

#[derive(Clone, Debug)]
struct Instr {
    line: usize,
    kind: Kind,
    dst: Dst,
    srcs: Vec<Src>,
}

/// A parsed PTX text.
#[derive(Clone, Debug)]
pub struct Program {
    instrs: Vec<Instr>,
    register_names: Vec<String>,
}

/// A program parsed once per text (the texts are constants).
pub struct ProgramCache(OnceLock<Result<Program, PtxEmuError>>);

impl ProgramCache {
    pub const fn new() -> Self {
        Self(OnceLock::new())
    }
}

impl Default for ProgramCache {
    fn default() -> Self {
        Self::new()
    }
}

/// Runs `text` with `inputs` as operands `0..IN*N` and returns operands `IN*N..(IN+1)*N`.
pub fn run_cached<const N: usize, const IN: usize>(
    text: &str,
    inputs: [&[u32; N]; IN],
    cache: &ProgramCache,
) -> Result<[u32; N], PtxEmuError> {
    let program = cache.0.get_or_init(|| Program::parse(text)).as_ref().map_err(Clone::clone)?;
    let mut operands = vec![0u32; (IN + 1) * N];
    for (i, input) in inputs.iter().enumerate() {
        operands[i * N..(i + 1) * N].copy_from_slice(&input[..]);
    }
    program.run(&mut operands)?;
    let mut out = [0u32; N];
    out.copy_from_slice(&operands[IN * N..]);
    Ok(out)
}

impl Program {
    /// Parses a template as written for `asm!` (`{{`/`}}` are literal braces, `{k}` operand k).
    pub fn parse(text: &str) -> Result<Program, PtxEmuError> {
        let mut registers: HashMap<String, usize> = HashMap::new();
        let mut register_names = Vec::new();
        let mut instrs = Vec::new();
        for (line_index, raw) in text.lines().enumerate() {
            let line = line_index + 1;
            let parse_err = |message: String| PtxEmuError::Parse { line, message };
            let code = raw.split("//").next().unwrap_or("").trim();
            if code.is_empty() || code == "{{" || code == "}}" {
                continue;
            }
            let code = code.strip_suffix(';').ok_or_else(|| parse_err(format!("missing ';' in {code:?}")))?;
            let (opcode, rest) = code.split_once(char::is_whitespace).ok_or_else(|| parse_err(format!("no operands in {code:?}")))?;
            if opcode == ".reg" {
                declare(rest, &mut registers, &mut register_names).map_err(parse_err)?;
                continue;
            }
            if opcode == "ld.const.u32" {
                let (dst, src) = load_const(rest, &registers).map_err(parse_err)?;
                instrs.push(Instr { line, kind: Kind::Mov, dst, srcs: vec![src] });
                continue;
            }
            let kind = parse_opcode(opcode).ok_or_else(|| parse_err(format!("unsupported instruction {opcode:?}")))?;
            let args: Vec<&str> = rest.split(',').map(str::trim).collect();
            let (dst, srcs) = args.split_first().ok_or_else(|| parse_err("no destination".into()))?;
            let dst = match parse_src(dst, &registers).map_err(parse_err)? {
                Src::Reg(r) => Dst::Reg(r),
                Src::Operand(k) => Dst::Operand(k),
                Src::Imm(_) => return Err(parse_err("immediate destination".into())),
            };
            let srcs = srcs.iter().map(|s| parse_src(s, &registers)).collect::<Result<Vec<_>, _>>().map_err(parse_err)?;
            let want = match kind {
                Kind::Mov => 1,
                Kind::Mad { .. } | Kind::Selp => 3,
                _ => 2,
            };
            if srcs.len() != want {
                return Err(parse_err(format!("{opcode} takes {want} sources, got {}", srcs.len())));
            }
            instrs.push(Instr { line, kind, dst, srcs });
        }
        Ok(Program { instrs, register_names })
    }

    /// Executes with `operands` holding inputs (read) and outputs (written) by operand number.
    pub fn run(&self, operands: &mut [u32]) -> Result<(), PtxEmuError> {
        let mut regs: Vec<Option<u32>> = vec![None; self.register_names.len()];
        let mut carry = false;
        for ins in &self.instrs {
            let read = |s: Src, regs: &[Option<u32>]| -> Result<u32, PtxEmuError> {
                match s {
                    Src::Imm(v) => Ok(v),
                    Src::Reg(r) => regs[r].ok_or_else(|| PtxEmuError::Uninitialized {
                        line: ins.line,
                        register: self.register_names[r].clone(),
                    }),
                    Src::Operand(k) => operands.get(k).copied().ok_or(PtxEmuError::Operand { line: ins.line, index: k }),
                }
            };
            let v: Vec<u32> = ins.srcs.iter().map(|&s| read(s, &regs)).collect::<Result<_, _>>()?;
            let result = match ins.kind {
                Kind::Mov => v[0],
                Kind::Mul { hi } => {
                    let p = v[0] as u64 * v[1] as u64;
                    if hi { (p >> 32) as u32 } else { p as u32 }
                }
                Kind::Mad { hi, carry_in, carry_out } => {
                    let p = v[0] as u64 * v[1] as u64;
                    let part = if hi { p >> 32 } else { p & 0xffff_ffff };
                    let sum = part + v[2] as u64 + (carry_in && carry) as u64;
                    if carry_out {
                        carry = sum >> 32 != 0;
                    }
                    sum as u32
                }
                Kind::Add { carry_in, carry_out } => {
                    let sum = v[0] as u64 + v[1] as u64 + (carry_in && carry) as u64;
                    if carry_out {
                        carry = sum >> 32 != 0;
                    }
                    sum as u32
                }
                Kind::Sub { borrow_in, borrow_out } => {
                    let sub = v[1] as u64 + (borrow_in && carry) as u64;
                    if borrow_out {
                        carry = (v[0] as u64) < sub;
                    }
                    (v[0] as u64).wrapping_sub(sub) as u32
                }
                Kind::And => v[0] & v[1],
                Kind::Or => v[0] | v[1],
                Kind::Setp { equal } => ((v[0] == v[1]) == equal) as u32,
                Kind::Selp => {
                    if v[2] != 0 { v[0] } else { v[1] }
                }
            };
            match ins.dst {
                Dst::Reg(r) => regs[r] = Some(result),
                Dst::Operand(k) => {
                    *operands.get_mut(k).ok_or(PtxEmuError::Operand { line: ins.line, index: k })? = result;
                }
            }
        }
        Ok(())
    }
}

/// `.u32 %a<8>, %m` or `.pred %q`: registers named `%a0..%a7`, `%m`.
fn declare(rest: &str, registers: &mut HashMap<String, usize>, names: &mut Vec<String>) -> Result<(), String> {
    let rest = rest.trim();
    let (ty, list) = rest.split_once(char::is_whitespace).ok_or_else(|| format!("bad .reg {rest:?}"))?;
    if ty != ".u32" && ty != ".pred" {
        return Err(format!("unsupported register type {ty}"));
    }
    for item in list.split(',').map(str::trim) {
        let mut add = |name: String| {
            registers.insert(name.clone(), names.len());
            names.push(name);
        };
        match item.split_once('<') {
            Some((base, count)) => {
                let count: usize = count.trim_end_matches('>').parse().map_err(|_| format!("bad register range {item:?}"))?;
                for i in 0..count {
                    add(format!("{base}{i}"));
                }
            }
            None => add(item.to_string()),
        }
    }
    Ok(())
}

/// `%r, [zkgpu_inv_<value>]` (the operands of `ld.const.u32`): a register and the value named by the symbol.
fn load_const(rest: &str, registers: &HashMap<String, usize>) -> Result<(Dst, Src), String> {
    let (dst, address) = rest.split_once(',').ok_or_else(|| format!("ld.const needs 2 operands: {rest:?}"))?;
    let dst = match parse_src(dst.trim(), registers)? {
        Src::Reg(r) => Dst::Reg(r),
        _ => return Err(format!("ld.const destination must be a register: {dst:?}")),
    };
    let value = address
        .trim()
        .strip_prefix("[zkgpu_inv_")
        .and_then(|a| a.strip_suffix(']'))
        .ok_or_else(|| format!("unknown constant-bank address {address:?} (only [zkgpu_inv_<value>])"))?;
    match parse_src(value, registers)? {
        src @ Src::Imm(_) => Ok((dst, src)),
        _ => Err(format!("bad constant-bank symbol value {value:?}")),
    }
}

fn parse_opcode(opcode: &str) -> Option<Kind> {
    let parts: Vec<&str> = opcode.split('.').collect();
    let cc = parts.contains(&"cc");
    let hi = parts.contains(&"hi");
    let ty = *parts.last()?;
    if ty != "u32" && ty != "b32" {
        return None;
    }
    Some(match parts[0] {
        "mov" => Kind::Mov,
        "mul" => Kind::Mul { hi },
        "mad" => Kind::Mad { hi, carry_in: false, carry_out: cc },
        "madc" => Kind::Mad { hi, carry_in: true, carry_out: cc },
        "add" => Kind::Add { carry_in: false, carry_out: cc },
        "addc" => Kind::Add { carry_in: true, carry_out: cc },
        "sub" => Kind::Sub { borrow_in: false, borrow_out: cc },
        "subc" => Kind::Sub { borrow_in: true, borrow_out: cc },
        "and" => Kind::And,
        "or" => Kind::Or,
        "setp" if parts.contains(&"eq") => Kind::Setp { equal: true },
        "setp" if parts.contains(&"ne") => Kind::Setp { equal: false },
        "selp" => Kind::Selp,
        _ => return None,
    })
}

fn parse_src(s: &str, registers: &HashMap<String, usize>) -> Result<Src, String> {
    if s.starts_with('%') {
        return registers.get(s).map(|&r| Src::Reg(r)).ok_or_else(|| format!("undeclared register {s}"));
    }
    if let Some(k) = s.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        return k.parse().map(Src::Operand).map_err(|_| format!("bad operand {s:?}"));
    }
    let value = match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse::<u64>(),
    }
    .map_err(|_| format!("bad immediate {s:?}"))?;
    u32::try_from(value).map(Src::Imm).map_err(|_| format!("immediate {s} exceeds 32 bits"))
}
