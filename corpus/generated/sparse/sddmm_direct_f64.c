/*
 * sampled dense-dense product accumulated in place, out[j] += A[i][p] * B[col[j]][p] (double).
 */
void sddmm_direct_f64(int n, int m, int nnz, int k, int rowptr[n + 1], int col[nnz],
                      double val[nnz], double A[n][k], double B[m][k], double out[nnz])
{
    for (int i = 0; i < n; i++)
        for (int j = rowptr[i]; j < rowptr[i + 1]; j++)
            for (int p = 0; p < k; p++)
                out[j] += A[i][p] * B[col[j]][p];
}
