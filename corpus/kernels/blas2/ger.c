/* ger: rank-1 update A <- A + alpha * x y^T in single precision. */
void ger(int m, int n, float alpha, float x[m], float y[n], float A[m][n])
{
    int i, j;

    for (i = 0; i < m; ++i)
        for (j = 0; j < n; ++j)
            A[i][j] += alpha * x[i] * y[j];
}
