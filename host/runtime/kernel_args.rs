//! Typed kernel launches: one argument struct per parameter list of the kernels crate's interface
//! (`zkgpu_kernels::for_each_signature!`), and [`KernelFn`], a kernel that launches only with the struct of its
//! own list. A launch site names every argument (`MsmCount { scalars: read(&view), len, .. }`), says which
//! buffers the kernel writes ([`write()`]) and which it only reads ([`read()`]), and cannot pass a `u32` where a
//! pointer goes, or another kernel's arguments: all of that is a compile error, checked without a GPU.
//!
//! Reads and writes matter beyond documentation: cudarc orders work on a buffer across streams by them (a
//! launch that reads waits for the buffer's last write on another stream; one that writes also waits for its
//! last readers).
//!
//! ```no_run
//! use zkgpu::kernel_args::{self as args, read, write};
//! use zkgpu_kernels::interface::NTT_H_SUBTRACT;
//! # fn f(gpu: &zkgpu::Gpu, a: &mut zkgpu::DeviceBuffer<blstrs::Scalar>, c: &zkgpu::DeviceBuffer<blstrs::Scalar>,
//! #      z: &zkgpu::DeviceBuffer<blstrs::Scalar>) -> zkgpu::Result<()> {
//! let subtract = gpu.kernel(&NTT_H_SUBTRACT)?;
//! let arguments = args::NttHSubtract { a: write(a.raw_mut()), c: read(c.raw()), z: read(z.raw()), count: 1 };
//! // SAFETY: (the kernel's contract) one element each, one thread.
//! unsafe { subtract.launch(gpu.stream(), zkgpu::launch_config_1d(1, 256), arguments) }
//! # }
//! ```
//! Another list's struct, even one of the same shape, does not compile:
//! ```compile_fail
//! use zkgpu::kernel_args::{self as args, read, write};
//! use zkgpu_kernels::interface::NTT_H_SUBTRACT;
//! # fn f(gpu: &zkgpu::Gpu, a: &mut zkgpu::DeviceBuffer<blstrs::Scalar>, c: &zkgpu::DeviceBuffer<blstrs::Scalar>,
//! #      z: &zkgpu::DeviceBuffer<blstrs::Scalar>) -> zkgpu::Result<()> {
//! let subtract = gpu.kernel(&NTT_H_SUBTRACT)?;
//! let arguments = args::NttHPointwise { a: write(a.raw_mut()), b: read(c.raw()), z: read(z.raw()), count: 1 };
//! unsafe { subtract.launch(gpu.stream(), zkgpu::launch_config_1d(1, 256), arguments) }
//! # }
//! ```
use std::marker::PhantomData;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, CudaView, CudaViewMut, LaunchArgs, LaunchConfig, PushKernelArg,
};
use zkgpu_kernels::interface::{Entry, Signature, sig};

use crate::device::Gpu;
use crate::error::Result;
use crate::launch::launched;

/// A device buffer a kernel reads.
pub trait DeviceRead {
    /// Pushes the buffer's address as the next argument (cudarc: wait for its last write, record this read).
    fn push<'a>(&'a self, launch: &mut LaunchArgs<'a>);
}

impl<T> DeviceRead for CudaSlice<T> {
    fn push<'a>(&'a self, launch: &mut LaunchArgs<'a>) {
        launch.arg(self);
    }
}

impl<T> DeviceRead for CudaView<'_, T> {
    fn push<'a>(&'a self, launch: &mut LaunchArgs<'a>) {
        launch.arg(self);
    }
}

/// A device buffer a kernel writes (and may read).
pub trait DeviceWrite {
    /// Pushes the buffer's address as the next argument (cudarc: wait for its last reads and write, record
    /// this write).
    fn push<'a>(&'a mut self, launch: &mut LaunchArgs<'a>);
}

impl<T> DeviceWrite for CudaSlice<T> {
    fn push<'a>(&'a mut self, launch: &mut LaunchArgs<'a>) {
        launch.arg(self);
    }
}

impl<T> DeviceWrite for CudaViewMut<'_, T> {
    fn push<'a>(&'a mut self, launch: &mut LaunchArgs<'a>) {
        launch.arg(self);
    }
}

/// A pointer argument: a buffer the kernel reads, one it writes, or null (where the kernel documents that
/// null means "none").
pub enum Ptr<'s> {
    /// [`read()`].
    Read(&'s dyn DeviceRead),
    /// [`write()`].
    Write(&'s mut dyn DeviceWrite),
    /// A raw device address: for a parameter that aliases another argument, which orders the stream's
    /// accesses to the buffer (e.g. an in-place pass's source, the address of its destination).
    Address(u64),
    /// A null pointer.
    Null,
}

/// A buffer the kernel reads.
pub fn read<'s, B: DeviceRead + 's>(buffer: &'s B) -> Ptr<'s> {
    Ptr::Read(buffer)
}

/// A buffer the kernel writes.
pub fn write<'s, B: DeviceWrite + 's>(buffer: &'s mut B) -> Ptr<'s> {
    Ptr::Write(buffer)
}

/// A buffer the kernel reads, or null for `None`.
pub fn read_or_null<'s, B: DeviceRead + 's>(buffer: Option<&'s B>) -> Ptr<'s> {
    buffer.map_or(Ptr::Null, read)
}

/// One field of an argument struct, pushed in declaration order.
pub trait PushArg {
    /// Pushes the value (a pointer's address, or the integer itself) as the next kernel argument.
    fn push<'a>(&'a mut self, launch: &mut LaunchArgs<'a>);
}

impl PushArg for Ptr<'_> {
    fn push<'a>(&'a mut self, launch: &mut LaunchArgs<'a>) {
        static NULL: u64 = 0;
        match self {
            Ptr::Read(buffer) => (**buffer).push(launch),
            Ptr::Write(buffer) => (**buffer).push(launch),
            Ptr::Address(address) => {
                launch.arg(&*address);
            }
            Ptr::Null => {
                launch.arg(&NULL);
            }
        }
    }
}

impl PushArg for u32 {
    fn push<'a>(&'a mut self, launch: &mut LaunchArgs<'a>) {
        launch.arg(&*self);
    }
}

impl PushArg for u64 {
    fn push<'a>(&'a mut self, launch: &mut LaunchArgs<'a>) {
        launch.arg(&*self);
    }
}

/// The arguments of one parameter list ([`Signature`]): the structs below.
pub trait KernelArgs {
    /// The parameter list they fill.
    type Signature: Signature;
    /// Pushes every argument, in the kernel's parameter order.
    fn push<'a>(&'a mut self, launch: &mut LaunchArgs<'a>);
}

macro_rules! arg_type {
    (Ptr) => { Ptr<'s> };
    (U32) => { u32 };
    (U64) => { u64 };
}

macro_rules! define_args {
    ($($name:ident($($param:ident: $kind:ident),* $(,)?);)*) => {
        $(
            #[doc = concat!("The arguments of the [`sig::", stringify!($name), "`] kernels, in parameter order.")]
            #[allow(missing_docs)]
            pub struct $name<'s> {
                $(pub $param: arg_type!($kind),)*
            }

            impl KernelArgs for $name<'_> {
                type Signature = sig::$name;
                fn push<'a>(&'a mut self, launch: &mut LaunchArgs<'a>) {
                    $(PushArg::push(&mut self.$param, launch);)*
                }
            }
        )*
    };
}

zkgpu_kernels::for_each_signature!(define_args);

/// A loaded production kernel whose parameter list `S` is part of its type: [`KernelFn::launch`] takes only
/// `S`'s argument struct.
pub struct KernelFn<S> {
    function: CudaFunction,
    name: &'static str,
    signature: PhantomData<fn() -> S>,
}

impl<S: Signature> KernelFn<S> {
    /// The kernel's entry name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The driver's function, for its attributes (shared-memory opt-in, carveout).
    pub fn function(&self) -> &CudaFunction {
        &self.function
    }

    /// Queues the kernel on `stream` with `config` and `args`. Errors name the kernel (`Error::Launch`), or are `Error::ContextLost`.
    ///
    /// # Safety
    /// The kernel's own `# Safety` contract (in the kernels crate's `entry/`): grid and block shape, buffer
    /// sizes and alignment, what may alias. The types check only the kinds of the arguments and which kernel
    /// they belong to.
    pub unsafe fn launch<A: KernelArgs<Signature = S>>(
        &self,
        stream: &CudaStream,
        config: LaunchConfig,
        mut args: A,
    ) -> Result<()> {
        let mut launch = stream.launch_builder(&self.function);
        args.push(&mut launch);
        // SAFETY: forwarded to the caller.
        launched(self.name, unsafe { launch.launch(config) }).map(drop)
    }
}

impl<S> Clone for KernelFn<S> {
    fn clone(&self) -> Self {
        KernelFn { function: self.function.clone(), name: self.name, signature: PhantomData }
    }
}

impl<S> std::fmt::Debug for KernelFn<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelFn").field("name", &self.name).finish()
    }
}

impl Gpu {
    /// The production kernel `entry`, loading its family's module on first use; `Err(MissingKernel)` when the
    /// module lacks it.
    pub fn kernel<S: Signature>(&self, entry: &Entry<S>) -> Result<KernelFn<S>> {
        let function = self.function(entry.kernel.name)?;
        Ok(KernelFn { function, name: entry.kernel.name, signature: PhantomData })
    }
}
