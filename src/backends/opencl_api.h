/* opencl_api.h: the one table of the OpenCL API functions the devtrace layer wraps.
 *
 * Each X(ret, name, (parameters), (arguments), ...) row names a function of the ICD
 * dispatch table (CL/cl_icd.h) with its exact signature; opencl.c generates one
 * wrapper per row, the function-index enum and the API-name table from these lists,
 * so a name, its index and its wrapper cannot drift apart. The compiler checks every
 * signature when the wrapper is stored in the cl_icd_dispatch entry of the same name.
 *
 * The lists differ in how a wrapper reads the call's status and what it does after:
 *   RC        returns a cl_int status
 *   SYNC      returns a cl_int; waits for device work, so completed commands are read after it
 *   OBJ       returns an object or pointer; the status is *errcode_ret (the wrapper passes its
 *             own when the program passes NULL)
 *   PTR       returns a pointer and no status (recorded: CL_SUCCESS when non-NULL, else
 *             CL_INVALID_VALUE)
 *   VOID      returns nothing (recorded: CL_SUCCESS)
 *   ENQUEUE   enqueues device work that becomes a device event (kernel, memcpy, memset):
 *             the wrapper supplies an event when the program passes NULL
 *   REFCOUNT  retain/release of the objects the layer keeps records for; the extra columns
 *             name the record map and the change to the program's reference count
 *   SPECIAL   wrappers written by hand in opencl.c (queue creation with profiling forced on,
 *             queue queries answered as the program asked, kernel-name capture, __local
 *             argument sizes, device discovery at context creation)
 * Not wrapped: GL/D3D/DX9/EGL interop and vendor extensions (pass through untraced, as do
 * functions the program obtains with clGetExtensionFunctionAddress*). */
#ifndef DT_OPENCL_API_H
#define DT_OPENCL_API_H

/* clang-format off */
#define DT_CL_API_RC(X) \
    X(cl_int, clGetPlatformIDs, (cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms), (num_entries, platforms, num_platforms)) \
    X(cl_int, clGetPlatformInfo, (cl_platform_id platform, cl_platform_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (platform, param_name, param_value_size, param_value, param_value_size_ret)) \
    X(cl_int, clGetDeviceIDs, (cl_platform_id platform, cl_device_type device_type, cl_uint num_entries, cl_device_id *devices, cl_uint *num_devices), (platform, device_type, num_entries, devices, num_devices)) \
    X(cl_int, clGetDeviceInfo, (cl_device_id device, cl_device_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (device, param_name, param_value_size, param_value, param_value_size_ret)) \
    X(cl_int, clCreateSubDevices, (cl_device_id in_device, const cl_device_partition_property *properties, cl_uint num_devices, cl_device_id *out_devices, cl_uint *num_devices_ret), (in_device, properties, num_devices, out_devices, num_devices_ret)) \
    X(cl_int, clRetainDevice, (cl_device_id device), (device)) \
    X(cl_int, clReleaseDevice, (cl_device_id device), (device)) \
    X(cl_int, clGetContextInfo, (cl_context context, cl_context_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (context, param_name, param_value_size, param_value, param_value_size_ret)) \
    X(cl_int, clSetContextDestructorCallback, (cl_context context, void (CL_CALLBACK *pfn_notify)(cl_context, void *), void *user_data), (context, pfn_notify, user_data)) \
    X(cl_int, clRetainMemObject, (cl_mem memobj), (memobj)) \
    X(cl_int, clReleaseMemObject, (cl_mem memobj), (memobj)) \
    X(cl_int, clGetSupportedImageFormats, (cl_context context, cl_mem_flags flags, cl_mem_object_type image_type, cl_uint num_entries, cl_image_format *image_formats, cl_uint *num_image_formats), (context, flags, image_type, num_entries, image_formats, num_image_formats)) \
    X(cl_int, clGetMemObjectInfo, (cl_mem memobj, cl_mem_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (memobj, param_name, param_value_size, param_value, param_value_size_ret)) \
    X(cl_int, clGetImageInfo, (cl_mem image, cl_image_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (image, param_name, param_value_size, param_value, param_value_size_ret)) \
    X(cl_int, clGetPipeInfo, (cl_mem pipe, cl_pipe_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (pipe, param_name, param_value_size, param_value, param_value_size_ret)) \
    X(cl_int, clSetMemObjectDestructorCallback, (cl_mem memobj, void (CL_CALLBACK *pfn_notify)(cl_mem, void *), void *user_data), (memobj, pfn_notify, user_data)) \
    X(cl_int, clRetainSampler, (cl_sampler sampler), (sampler)) \
    X(cl_int, clReleaseSampler, (cl_sampler sampler), (sampler)) \
    X(cl_int, clGetSamplerInfo, (cl_sampler sampler, cl_sampler_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (sampler, param_name, param_value_size, param_value, param_value_size_ret)) \
    X(cl_int, clRetainProgram, (cl_program program), (program)) \
    X(cl_int, clReleaseProgram, (cl_program program), (program)) \
    X(cl_int, clBuildProgram, (cl_program program, cl_uint num_devices, const cl_device_id *device_list, const char *options, void (CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data), (program, num_devices, device_list, options, pfn_notify, user_data)) \
    X(cl_int, clCompileProgram, (cl_program program, cl_uint num_devices, const cl_device_id *device_list, const char *options, cl_uint num_input_headers, const cl_program *input_headers, const char **header_include_names, void (CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data), (program, num_devices, device_list, options, num_input_headers, input_headers, header_include_names, pfn_notify, user_data)) \
    X(cl_int, clUnloadCompiler, (void), ()) \
    X(cl_int, clUnloadPlatformCompiler, (cl_platform_id platform), (platform)) \
    X(cl_int, clGetProgramInfo, (cl_program program, cl_program_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (program, param_name, param_value_size, param_value, param_value_size_ret)) \
    X(cl_int, clGetProgramBuildInfo, (cl_program program, cl_device_id device, cl_program_build_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (program, device, param_name, param_value_size, param_value, param_value_size_ret)) \
    X(cl_int, clSetProgramReleaseCallback, (cl_program program, void (CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data), (program, pfn_notify, user_data)) \
    X(cl_int, clSetProgramSpecializationConstant, (cl_program program, cl_uint spec_id, size_t spec_size, const void *spec_value), (program, spec_id, spec_size, spec_value)) \
    X(cl_int, clSetKernelArgSVMPointer, (cl_kernel kernel, cl_uint arg_index, const void *arg_value), (kernel, arg_index, arg_value)) \
    X(cl_int, clSetKernelExecInfo, (cl_kernel kernel, cl_kernel_exec_info param_name, size_t param_value_size, const void *param_value), (kernel, param_name, param_value_size, param_value)) \
    X(cl_int, clGetKernelInfo, (cl_kernel kernel, cl_kernel_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (kernel, param_name, param_value_size, param_value, param_value_size_ret)) \
    X(cl_int, clGetKernelArgInfo, (cl_kernel kernel, cl_uint arg_indx, cl_kernel_arg_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (kernel, arg_indx, param_name, param_value_size, param_value, param_value_size_ret)) \
    X(cl_int, clGetKernelWorkGroupInfo, (cl_kernel kernel, cl_device_id device, cl_kernel_work_group_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (kernel, device, param_name, param_value_size, param_value, param_value_size_ret)) \
    X(cl_int, clGetKernelSubGroupInfo, (cl_kernel kernel, cl_device_id device, cl_kernel_sub_group_info param_name, size_t input_value_size, const void *input_value, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (kernel, device, param_name, input_value_size, input_value, param_value_size, param_value, param_value_size_ret)) \
    X(cl_int, clGetEventInfo, (cl_event event, cl_event_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (event, param_name, param_value_size, param_value, param_value_size_ret)) \
    X(cl_int, clSetEventCallback, (cl_event event, cl_int command_exec_callback_type, void (CL_CALLBACK *pfn_notify)(cl_event, cl_int, void *), void *user_data), (event, command_exec_callback_type, pfn_notify, user_data)) \
    X(cl_int, clSetUserEventStatus, (cl_event event, cl_int execution_status), (event, execution_status)) \
    X(cl_int, clRetainEvent, (cl_event event), (event)) \
    X(cl_int, clReleaseEvent, (cl_event event), (event)) \
    X(cl_int, clGetEventProfilingInfo, (cl_event event, cl_profiling_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (event, param_name, param_value_size, param_value, param_value_size_ret)) \
    X(cl_int, clFlush, (cl_command_queue command_queue), (command_queue)) \
    X(cl_int, clEnqueueUnmapMemObject, (cl_command_queue command_queue, cl_mem memobj, void *mapped_ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, memobj, mapped_ptr, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueNativeKernel, (cl_command_queue command_queue, void (CL_CALLBACK *user_func)(void *), void *args, size_t cb_args, cl_uint num_mem_objects, const cl_mem *mem_list, const void **args_mem_loc, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, user_func, args, cb_args, num_mem_objects, mem_list, args_mem_loc, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueMarker, (cl_command_queue command_queue, cl_event *event), (command_queue, event)) \
    X(cl_int, clEnqueueWaitForEvents, (cl_command_queue command_queue, cl_uint num_events, const cl_event *event_list), (command_queue, num_events, event_list)) \
    X(cl_int, clEnqueueBarrier, (cl_command_queue command_queue), (command_queue)) \
    X(cl_int, clEnqueueMigrateMemObjects, (cl_command_queue command_queue, cl_uint num_mem_objects, const cl_mem *mem_objects, cl_mem_migration_flags flags, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, num_mem_objects, mem_objects, flags, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueMarkerWithWaitList, (cl_command_queue command_queue, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueBarrierWithWaitList, (cl_command_queue command_queue, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueSVMFree, (cl_command_queue command_queue, cl_uint num_svm_pointers, void *svm_pointers[], void (CL_CALLBACK *pfn_free_func)(cl_command_queue, cl_uint, void *[], void *), void *user_data, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, num_svm_pointers, svm_pointers, pfn_free_func, user_data, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueSVMMemcpy, (cl_command_queue command_queue, cl_bool blocking_copy, void *dst_ptr, const void *src_ptr, size_t size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, blocking_copy, dst_ptr, src_ptr, size, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueSVMMemFill, (cl_command_queue command_queue, void *svm_ptr, const void *pattern, size_t pattern_size, size_t size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, svm_ptr, pattern, pattern_size, size, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueSVMMap, (cl_command_queue command_queue, cl_bool blocking_map, cl_map_flags flags, void *svm_ptr, size_t size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, blocking_map, flags, svm_ptr, size, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueSVMUnmap, (cl_command_queue command_queue, void *svm_ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, svm_ptr, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueSVMMigrateMem, (cl_command_queue command_queue, cl_uint num_svm_pointers, const void **svm_pointers, const size_t *sizes, cl_mem_migration_flags flags, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, num_svm_pointers, svm_pointers, sizes, flags, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clGetDeviceAndHostTimer, (cl_device_id device, cl_ulong *device_timestamp, cl_ulong *host_timestamp), (device, device_timestamp, host_timestamp)) \
    X(cl_int, clGetHostTimer, (cl_device_id device, cl_ulong *host_timestamp), (device, host_timestamp)) \
    X(cl_int, clSetDefaultDeviceCommandQueue, (cl_context context, cl_device_id device, cl_command_queue command_queue), (context, device, command_queue)) \

#define DT_CL_API_SYNC(X) \
    X(cl_int, clWaitForEvents, (cl_uint num_events, const cl_event *event_list), (num_events, event_list)) \
    X(cl_int, clFinish, (cl_command_queue command_queue), (command_queue)) \

#define DT_CL_API_OBJ(X) \
    X(cl_mem, clCreateBuffer, (cl_context context, cl_mem_flags flags, size_t size, void *host_ptr, cl_int *errcode_ret), (context, flags, size, host_ptr, errcode_ret)) \
    X(cl_mem, clCreateBufferWithProperties, (cl_context context, const cl_mem_properties *properties, cl_mem_flags flags, size_t size, void *host_ptr, cl_int *errcode_ret), (context, properties, flags, size, host_ptr, errcode_ret)) \
    X(cl_mem, clCreateSubBuffer, (cl_mem buffer, cl_mem_flags flags, cl_buffer_create_type buffer_create_type, const void *buffer_create_info, cl_int *errcode_ret), (buffer, flags, buffer_create_type, buffer_create_info, errcode_ret)) \
    X(cl_mem, clCreateImage, (cl_context context, cl_mem_flags flags, const cl_image_format *image_format, const cl_image_desc *image_desc, void *host_ptr, cl_int *errcode_ret), (context, flags, image_format, image_desc, host_ptr, errcode_ret)) \
    X(cl_mem, clCreateImageWithProperties, (cl_context context, const cl_mem_properties *properties, cl_mem_flags flags, const cl_image_format *image_format, const cl_image_desc *image_desc, void *host_ptr, cl_int *errcode_ret), (context, properties, flags, image_format, image_desc, host_ptr, errcode_ret)) \
    X(cl_mem, clCreateImage2D, (cl_context context, cl_mem_flags flags, const cl_image_format *image_format, size_t image_width, size_t image_height, size_t image_row_pitch, void *host_ptr, cl_int *errcode_ret), (context, flags, image_format, image_width, image_height, image_row_pitch, host_ptr, errcode_ret)) \
    X(cl_mem, clCreateImage3D, (cl_context context, cl_mem_flags flags, const cl_image_format *image_format, size_t image_width, size_t image_height, size_t image_depth, size_t image_row_pitch, size_t image_slice_pitch, void *host_ptr, cl_int *errcode_ret), (context, flags, image_format, image_width, image_height, image_depth, image_row_pitch, image_slice_pitch, host_ptr, errcode_ret)) \
    X(cl_mem, clCreatePipe, (cl_context context, cl_mem_flags flags, cl_uint pipe_packet_size, cl_uint pipe_max_packets, const cl_pipe_properties *properties, cl_int *errcode_ret), (context, flags, pipe_packet_size, pipe_max_packets, properties, errcode_ret)) \
    X(cl_sampler, clCreateSampler, (cl_context context, cl_bool normalized_coords, cl_addressing_mode addressing_mode, cl_filter_mode filter_mode, cl_int *errcode_ret), (context, normalized_coords, addressing_mode, filter_mode, errcode_ret)) \
    X(cl_sampler, clCreateSamplerWithProperties, (cl_context context, const cl_sampler_properties *sampler_properties, cl_int *errcode_ret), (context, sampler_properties, errcode_ret)) \
    X(cl_program, clCreateProgramWithSource, (cl_context context, cl_uint count, const char **strings, const size_t *lengths, cl_int *errcode_ret), (context, count, strings, lengths, errcode_ret)) \
    X(cl_program, clCreateProgramWithBinary, (cl_context context, cl_uint num_devices, const cl_device_id *device_list, const size_t *lengths, const unsigned char **binaries, cl_int *binary_status, cl_int *errcode_ret), (context, num_devices, device_list, lengths, binaries, binary_status, errcode_ret)) \
    X(cl_program, clCreateProgramWithBuiltInKernels, (cl_context context, cl_uint num_devices, const cl_device_id *device_list, const char *kernel_names, cl_int *errcode_ret), (context, num_devices, device_list, kernel_names, errcode_ret)) \
    X(cl_program, clCreateProgramWithIL, (cl_context context, const void *il, size_t length, cl_int *errcode_ret), (context, il, length, errcode_ret)) \
    X(cl_program, clLinkProgram, (cl_context context, cl_uint num_devices, const cl_device_id *device_list, const char *options, cl_uint num_input_programs, const cl_program *input_programs, void (CL_CALLBACK *pfn_notify)(cl_program, void *), void *user_data, cl_int *errcode_ret), (context, num_devices, device_list, options, num_input_programs, input_programs, pfn_notify, user_data, errcode_ret)) \
    X(cl_event, clCreateUserEvent, (cl_context context, cl_int *errcode_ret), (context, errcode_ret)) \
    X(void *, clEnqueueMapBuffer, (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_map, cl_map_flags map_flags, size_t offset, size_t size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event, cl_int *errcode_ret), (command_queue, buffer, blocking_map, map_flags, offset, size, num_events_in_wait_list, event_wait_list, event, errcode_ret)) \
    X(void *, clEnqueueMapImage, (cl_command_queue command_queue, cl_mem image, cl_bool blocking_map, cl_map_flags map_flags, const size_t *origin, const size_t *region, size_t *image_row_pitch, size_t *image_slice_pitch, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event, cl_int *errcode_ret), (command_queue, image, blocking_map, map_flags, origin, region, image_row_pitch, image_slice_pitch, num_events_in_wait_list, event_wait_list, event, errcode_ret)) \

#define DT_CL_API_PTR(X) \
    X(void *, clGetExtensionFunctionAddress, (const char *func_name), (func_name)) \
    X(void *, clGetExtensionFunctionAddressForPlatform, (cl_platform_id platform, const char *func_name), (platform, func_name)) \
    X(void *, clSVMAlloc, (cl_context context, cl_svm_mem_flags flags, size_t size, cl_uint alignment), (context, flags, size, alignment)) \

#define DT_CL_API_VOID(X) \
    X(void, clSVMFree, (cl_context context, void *svm_pointer), (context, svm_pointer)) \

#define DT_CL_API_ENQUEUE(X) \
    X(cl_int, clEnqueueNDRangeKernel, (cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim, const size_t *global_work_offset, const size_t *global_work_size, const size_t *local_work_size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, kernel, work_dim, global_work_offset, global_work_size, local_work_size, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueTask, (cl_command_queue command_queue, cl_kernel kernel, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, kernel, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueReadBuffer, (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read, size_t offset, size_t size, void *ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, buffer, blocking_read, offset, size, ptr, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueWriteBuffer, (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write, size_t offset, size_t size, const void *ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, buffer, blocking_write, offset, size, ptr, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueCopyBuffer, (cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer, size_t src_offset, size_t dst_offset, size_t size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, src_buffer, dst_buffer, src_offset, dst_offset, size, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueReadBufferRect, (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read, const size_t *buffer_origin, const size_t *host_origin, const size_t *region, size_t buffer_row_pitch, size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch, void *ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, buffer, blocking_read, buffer_origin, host_origin, region, buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueWriteBufferRect, (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write, const size_t *buffer_origin, const size_t *host_origin, const size_t *region, size_t buffer_row_pitch, size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch, const void *ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, buffer, blocking_write, buffer_origin, host_origin, region, buffer_row_pitch, buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueCopyBufferRect, (cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer, const size_t *src_origin, const size_t *dst_origin, const size_t *region, size_t src_row_pitch, size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, src_buffer, dst_buffer, src_origin, dst_origin, region, src_row_pitch, src_slice_pitch, dst_row_pitch, dst_slice_pitch, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueFillBuffer, (cl_command_queue command_queue, cl_mem buffer, const void *pattern, size_t pattern_size, size_t offset, size_t size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, buffer, pattern, pattern_size, offset, size, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueReadImage, (cl_command_queue command_queue, cl_mem image, cl_bool blocking_read, const size_t *origin, const size_t *region, size_t row_pitch, size_t slice_pitch, void *ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, image, blocking_read, origin, region, row_pitch, slice_pitch, ptr, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueWriteImage, (cl_command_queue command_queue, cl_mem image, cl_bool blocking_write, const size_t *origin, const size_t *region, size_t input_row_pitch, size_t input_slice_pitch, const void *ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, image, blocking_write, origin, region, input_row_pitch, input_slice_pitch, ptr, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueCopyImage, (cl_command_queue command_queue, cl_mem src_image, cl_mem dst_image, const size_t *src_origin, const size_t *dst_origin, const size_t *region, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, src_image, dst_image, src_origin, dst_origin, region, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueFillImage, (cl_command_queue command_queue, cl_mem image, const void *fill_color, const size_t *origin, const size_t *region, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, image, fill_color, origin, region, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueCopyImageToBuffer, (cl_command_queue command_queue, cl_mem src_image, cl_mem dst_buffer, const size_t *src_origin, const size_t *region, size_t dst_offset, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, src_image, dst_buffer, src_origin, region, dst_offset, num_events_in_wait_list, event_wait_list, event)) \
    X(cl_int, clEnqueueCopyBufferToImage, (cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_image, size_t src_offset, const size_t *dst_origin, const size_t *region, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event), (command_queue, src_buffer, dst_image, src_offset, dst_origin, region, num_events_in_wait_list, event_wait_list, event)) \

#define DT_CL_API_SPECIAL(X) \
    X(cl_context, clCreateContext, (const cl_context_properties *properties, cl_uint num_devices, const cl_device_id *devices, void (CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *), void *user_data, cl_int *errcode_ret), (properties, num_devices, devices, pfn_notify, user_data, errcode_ret)) \
    X(cl_context, clCreateContextFromType, (const cl_context_properties *properties, cl_device_type device_type, void (CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *), void *user_data, cl_int *errcode_ret), (properties, device_type, pfn_notify, user_data, errcode_ret)) \
    X(cl_command_queue, clCreateCommandQueue, (cl_context context, cl_device_id device, cl_command_queue_properties properties, cl_int *errcode_ret), (context, device, properties, errcode_ret)) \
    X(cl_command_queue, clCreateCommandQueueWithProperties, (cl_context context, cl_device_id device, const cl_queue_properties *properties, cl_int *errcode_ret), (context, device, properties, errcode_ret)) \
    X(cl_int, clGetCommandQueueInfo, (cl_command_queue command_queue, cl_command_queue_info param_name, size_t param_value_size, void *param_value, size_t *param_value_size_ret), (command_queue, param_name, param_value_size, param_value, param_value_size_ret)) \
    X(cl_int, clSetCommandQueueProperty, (cl_command_queue command_queue, cl_command_queue_properties properties, cl_bool enable, cl_command_queue_properties *old_properties), (command_queue, properties, enable, old_properties)) \
    X(cl_kernel, clCreateKernel, (cl_program program, const char *kernel_name, cl_int *errcode_ret), (program, kernel_name, errcode_ret)) \
    X(cl_int, clCreateKernelsInProgram, (cl_program program, cl_uint num_kernels, cl_kernel *kernels, cl_uint *num_kernels_ret), (program, num_kernels, kernels, num_kernels_ret)) \
    X(cl_kernel, clCloneKernel, (cl_kernel source_kernel, cl_int *errcode_ret), (source_kernel, errcode_ret)) \
    X(cl_int, clSetKernelArg, (cl_kernel kernel, cl_uint arg_index, size_t arg_size, const void *arg_value), (kernel, arg_index, arg_size, arg_value)) \

#define DT_CL_API_REFCOUNT(X) \
    X(cl_int, clRetainContext, (cl_context context), (context), dt_cl_contexts, +1) \
    X(cl_int, clReleaseContext, (cl_context context), (context), dt_cl_contexts, -1) \
    X(cl_int, clRetainCommandQueue, (cl_command_queue command_queue), (command_queue), dt_cl_queues, +1) \
    X(cl_int, clReleaseCommandQueue, (cl_command_queue command_queue), (command_queue), dt_cl_queues, -1) \
    X(cl_int, clRetainKernel, (cl_kernel kernel), (kernel), dt_cl_kernels, +1) \
    X(cl_int, clReleaseKernel, (cl_kernel kernel), (kernel), dt_cl_kernels, -1)

/* clang-format on */

/* Every wrapped function, for the index enum and the name table. */
/* clang-format off */
#define DT_CL_API_ALL(X)  \
    DT_CL_API_RC(X)       \
    DT_CL_API_SYNC(X)     \
    DT_CL_API_OBJ(X)      \
    DT_CL_API_PTR(X)      \
    DT_CL_API_VOID(X)     \
    DT_CL_API_ENQUEUE(X)  \
    DT_CL_API_REFCOUNT(X) \
    DT_CL_API_SPECIAL(X)
/* clang-format on */

#endif
