/*
 * CSR times a dense matrix of 16 columns, C[i][p] += val[j] * B[col[j]][p], entries outside the
 * dense loop (double).
 */
void spmm_csr_ijk_w16_f64(int n, int m, int nnz, int k, int rowptr[n + 1], int col[nnz],
                          double val[nnz], double B[m][k], double C[n][k])
{
    for (int i = 0; i < n; i++)
        for (int j = rowptr[i]; j < rowptr[i + 1]; j++)
            for (int p = 0; p < k; p++)
                C[i][p] += val[j] * B[col[j]][p];
}
