/* In-place transpose by swapping across the diagonal through a scalar temporary. */
void transpose_inplace(int n, double A[n][n])
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double tmp = A[i][j];
            A[i][j] = A[j][i];
            A[j][i] = tmp;
        }
}
