/*
 * rank-1 update A += alpha x y^T, i outer (double).
 */
void ger_ij_f64(int n, int m, double alpha, double A[n][m], double x[n], double y[m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            A[i][j] += alpha * x[i] * y[j];
}
