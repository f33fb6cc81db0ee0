//! Convolution and pooling layers, as `torch.nn.Conv1d`, `Conv2d`,
//! `MaxPool2d`, `AvgPool2d`: PyTorch's layouts (`x` `[N, C, *spatial]`,
//! weights `[O, C / groups, *kernel]`), defaults and initialisation. They
//! call [`crate::conv`], [`crate::max_pool2d`] and [`crate::avg_pool2d`].

use super::init;
use crate::tree::Setting;
use crate::{Array, DType, Tree, differentiable, random::Key};

/// `[1, c, 1, ..]` with `spatial` ones after `c`: a bias of `c` channels
/// shaped to broadcast over `[N, c, *spatial]`.
fn channel_shape(c: usize, spatial: usize) -> Vec<usize> {
    let mut shape = vec![1; spatial + 2];
    shape[1] = c;
    shape
}

macro_rules! conv_layer {
    ($(#[$doc:meta])* $name:ident, $d:literal, $torch:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug, Tree)]
        pub struct $name {
            /// `[out, in / groups, *kernel]`.
            pub weight: Array,
            /// `[out]`, when the layer has one.
            pub bias: Option<Array>,
            /// Step between windows, per spatial axis (default 1).
            pub stride: Setting<[usize; $d]>,
            /// Zeros added on both sides, per spatial axis (default 0).
            pub padding: Setting<[usize; $d]>,
            /// Spacing of the kernel's taps, per spatial axis (default 1).
            pub dilation: Setting<[usize; $d]>,
            /// Channel groups (default 1; `in` and `out` divisible by it).
            pub groups: Setting<usize>,
        }

        impl $name {
            #[doc = concat!("A layer `in → out` with kernel `kernel`, stride 1, no padding, one group and a bias, initialised as `", $torch, "`: weight and bias uniform in `±1/√fan_in` (`fan_in = in · kernel size`).")]
            #[track_caller]
            pub fn new(inputs: usize, outputs: usize, kernel: [usize; $d], key: Key) -> $name {
                $name::grouped(inputs, outputs, kernel, 1, true, key)
            }

            /// A layer with `groups` channel groups, with or without a bias.
            #[track_caller]
            pub fn grouped(
                inputs: usize,
                outputs: usize,
                kernel: [usize; $d],
                groups: usize,
                bias: bool,
                key: Key,
            ) -> $name {
                assert!(
                    groups > 0 && inputs % groups == 0 && outputs % groups == 0,
                    concat!(stringify!($name), "::grouped: {} inputs and {} outputs must both be divisible by groups = {}"),
                    inputs, outputs, groups
                );
                let per = inputs / groups;
                let mut shape = vec![outputs, per];
                shape.extend(kernel);
                let fan_in = per * kernel.iter().product::<usize>();
                let bound = 1.0 / (fan_in as f64).sqrt();
                let [kw, kb] = key.split2();
                $name {
                    weight: init::uniform(&shape, -bound, bound, DType::F32, kw),
                    bias: bias.then(|| init::uniform(&[outputs], -bound, bound, DType::F32, kb)),
                    stride: Setting([1; $d]),
                    padding: Setting([0; $d]),
                    dilation: Setting([1; $d]),
                    groups: Setting(groups),
                }
            }

            /// The same layer with stride `s` on every spatial axis.
            pub fn stride(mut self, s: usize) -> $name {
                self.stride = Setting([s; $d]);
                self
            }

            /// The same layer with `p` zeros on both sides of every spatial axis.
            pub fn padding(mut self, p: usize) -> $name {
                self.padding = Setting([p; $d]);
                self
            }

            /// The same layer with dilation `k` on every spatial axis.
            pub fn dilation(mut self, k: usize) -> $name {
                self.dilation = Setting([k; $d]);
                self
            }

            /// The convolution of `x` (`[N, in, *spatial]`) plus the bias.
            #[track_caller]
            #[differentiable]
            pub fn forward(&self, x: &Array) -> Array {
                let y = nabla::conv(
                    x,
                    &self.weight,
                    &*self.stride,
                    &*self.padding,
                    &*self.dilation,
                    *self.groups,
                );
                if let Some(b) = &self.bias {
                    y + b.reshape(&channel_shape(b.numel(), $d))
                } else {
                    y
                }
            }
        }
    };
}

conv_layer! {
    /// A 1-D convolution, as `torch.nn.Conv1d`: `x` `[N, in, L]`.
    ///
    /// ```
    /// use nabla::{nn::Conv1d, prelude::*};
    /// let conv = Conv1d::new(3, 8, [5], Key::new(0)).padding(2);
    /// let y = conv.forward(&Array::ones(&[4, 3, 16], DType::F32));
    /// assert_eq!(y.shape(), &[4, 8, 16]);
    /// let names: Vec<String> = nabla::tree::named_leaves(&conv).into_iter().map(|(n, _)| n).collect();
    /// assert_eq!(names, ["weight", "bias"]);
    /// ```
    Conv1d, 1, "torch.nn.Conv1d"
}

conv_layer! {
    /// A 2-D convolution, as `torch.nn.Conv2d`: `x` `[N, in, H, W]`.
    ///
    /// ```
    /// use nabla::{nn::Conv2d, prelude::*};
    /// let conv = Conv2d::new(3, 16, [3, 3], Key::new(0)).stride(2).padding(1);
    /// let y = conv.forward(&Array::ones(&[2, 3, 32, 32], DType::F32));
    /// assert_eq!(y.shape(), &[2, 16, 16, 16]);
    /// assert_eq!(conv.weight.shape(), &[16, 3, 3, 3]);
    /// ```
    Conv2d, 2, "torch.nn.Conv2d"
}

macro_rules! pool_layer {
    ($(#[$doc:meta])* $name:ident, $func:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name {
            /// Window size.
            pub kernel: [usize; 2],
            /// Step between windows.
            pub stride: [usize; 2],
            /// Padding on both sides (at most half the kernel).
            pub padding: [usize; 2],
        }

        impl $name {
            /// Square windows of `k`, stride `k`, no padding.
            pub fn new(k: usize) -> $name {
                $name {
                    kernel: [k, k],
                    stride: [k, k],
                    padding: [0, 0],
                }
            }

            #[doc = concat!("The ", $what, " of each window of `x` (`[N, C, H, W]` or `[C, H, W]`).")]
            #[track_caller]
            pub fn forward(&self, x: &Array) -> Array {
                crate::$func(x, &self.kernel, &self.stride, &self.padding)
            }
        }
    };
}

pool_layer! {
    /// 2-D max pooling, as `torch.nn.MaxPool2d` (stride defaults to the
    /// kernel; padding reads −∞). No parameters.
    ///
    /// ```
    /// use nabla::{nn::MaxPool2d, prelude::*};
    /// let x = Array::arange(16, DType::F32).reshape(&[1, 1, 4, 4]);
    /// assert_eq!(MaxPool2d::new(2).forward(&x).to_vec::<f32>(), vec![5.0, 7.0, 13.0, 15.0]);
    /// ```
    MaxPool2d, max_pool2d, "maximum"
}

pool_layer! {
    /// 2-D average pooling, as `torch.nn.AvgPool2d` (stride defaults to the
    /// kernel; zero padding counts in the average). No parameters.
    ///
    /// ```
    /// use nabla::{nn::AvgPool2d, prelude::*};
    /// let x = Array::arange(16, DType::F32).reshape(&[1, 1, 4, 4]);
    /// assert_eq!(AvgPool2d::new(2).forward(&x).to_vec::<f32>(), vec![2.5, 4.5, 10.5, 12.5]);
    /// ```
    AvgPool2d, avg_pool2d, "mean"
}
