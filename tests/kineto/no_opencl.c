/* no_opencl.c: kineto_host's OpenCL mode where the build has no OpenCL: says so. */
#include <stdio.h>

int opencl_parity_main(int argc, char **argv);

int opencl_parity_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "kineto_host: built without OpenCL (no OpenCL headers or loader)\n");
    return 77;
}
