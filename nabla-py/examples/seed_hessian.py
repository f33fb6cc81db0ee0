"""The seed's second example: the Hessian of a vmapped function, by
composing transforms of a Python function."""

import nabla


def foo(args):
    return [nabla.sum(nabla.sin(args[0]))]


foo_hessian = nabla.jacfwd(nabla.jacrev(nabla.vmap(foo)))
h = foo_hessian([nabla.randn((2, 3), nabla.float32)])
print(h[0].shape)  # (2, 2, 3, 2, 3)
