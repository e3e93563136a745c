/*
 * CSR times a dense matrix of 4 columns, C[i][p] += val[j] * B[col[j]][p], entries outside the
 * dense loop (float).
 */
void spmm_csr_ijk_w4_f32(int n, int m, int nnz, int k, int rowptr[n + 1], int col[nnz],
                         float val[nnz], float B[m][k], float C[n][k])
{
    for (int i = 0; i < n; i++)
        for (int j = rowptr[i]; j < rowptr[i + 1]; j++)
            for (int p = 0; p < k; p++)
                C[i][p] += val[j] * B[col[j]][p];
}
