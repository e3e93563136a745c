/*
 * rank-1 update A += x y^T, column loop outside (double).
 */
void ger_ji_f64(int n, int m, double A[n][m], double x[n], double y[m])
{
    for (int j = 0; j < m; j++)
        for (int i = 0; i < n; i++)
            A[i][j] += x[i] * y[j];
}
