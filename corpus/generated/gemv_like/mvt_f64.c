/*
 * matrix-vector and transposed matrix-vector products fused: x1 += A v1, x2 += A^T v2 (double).
 */
void mvt_f64(int n, double A[n][n], double x1[n], double x2[n], double v1[n], double v2[n])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            x1[i] += A[i][j] * v1[j];
            x2[i] += A[j][i] * v2[j];
        }
}
