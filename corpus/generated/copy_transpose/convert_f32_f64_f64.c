/*
 * matrix copy with widening conversion float -> double (double).
 */
void convert_f32_f64_f64(int n, int m, float A[n][m], double B[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            B[i][j] = (double)A[i][j];
}
