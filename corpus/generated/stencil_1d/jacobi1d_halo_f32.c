/*
 * 1-D 3-point stencil, 3-point, no time loop, halo-padded arrays (float).
 */
void jacobi1d_halo_f32(int n, float A[n + 2], float B[n + 2])
{
    for (int i = 1; i < n + 1; i++)
        B[i] = 0.2302f * A[i] + 0.3599f * (A[i - 1] + A[i + 1]);
}
