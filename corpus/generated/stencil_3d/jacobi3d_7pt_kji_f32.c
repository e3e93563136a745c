/*
 * 3-D 7-point stencil with the loops reversed (k outer), 7-point, no time loop, loop order kji
 * (float).
 */
void jacobi3d_7pt_kji_f32(int nx, float A[nx][nx][nx], float B[nx][nx][nx])
{
    for (int k = 1; k < nx - 1; k++)
        for (int j = 1; j < nx - 1; j++)
            for (int i = 1; i < nx - 1; i++)
                B[i][j][k] = 0.1337f * A[i][j][k]
                    + 0.1361f * (A[i - 1][j][k] + A[i + 1][j][k] + A[i][j - 1][k]
                    + A[i][j + 1][k] + A[i][j][k - 1] + A[i][j][k + 1]);
}
