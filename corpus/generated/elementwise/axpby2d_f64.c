/*
 * matrix axpby B = alpha A + beta B (double).
 */
void axpby2d_f64(int n, int m, double alpha, double beta, double A[n][m], double B[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            B[i][j] = alpha * A[i][j] + beta * B[i][j];
}
