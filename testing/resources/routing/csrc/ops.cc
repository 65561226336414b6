// One dispatcher per op, kernels registered per backend (the FlagOS plugin's macros).
ADD_IMPL_TO_DISPATCHER(AddTensorFn, add_tensor_dispatcher, "add.Tensor")
ADD_IMPL_TO_DISPATCHER(MulTensorFn, mul_tensor_dispatcher, "mul.Tensor")
REGISTER_IMPL_TO_DISPATCHER(AddTensorFn, add_tensor_dispatcher, Backend::kAcme, AddKernelAcme)
REGISTER_IMPL_TO_DISPATCHER(AddTensorFn, add_tensor_dispatcher, Backend::kFlagOs, AddKernel)
REGISTER_IMPL_TO_DISPATCHER(
    MulTensorFn, mul_tensor_dispatcher, Backend::kFlagOs, MulKernel)
