/*
 * CSR times a dense matrix, the dense loop outside the row's entries (double).
 */
void spmm_csr_ikj_f64(int n, int m, int nnz, int k, int rowptr[n + 1], int col[nnz],
                      double val[nnz], double B[m][k], double C[n][k])
{
    int i, p, j;

    for (i = 0; i < n; i++)
        for (p = 0; p < k; p++)
            for (j = rowptr[i]; j < rowptr[i + 1]; j++)
                C[i][p] += val[j] * B[col[j]][p];
}
