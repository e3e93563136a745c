/*
 * CSR times a dense matrix of 64 columns, C[i][p] += val[j] * B[col[j]][p], entries outside the
 * dense loop (float).
 */
void spmm_csr_ijk_w64_f32(int n, int m, int nnz, int k, int rowptr[n + 1], int col[nnz],
                          float val[nnz], float B[m][k], float C[n][k])
{
    int i, j, p;

    for (i = 0; i < n; i++)
        for (j = rowptr[i]; j < rowptr[i + 1]; j++)
            for (p = 0; p < k; p++)
                C[i][p] = C[i][p] + val[j] * B[col[j]][p];
}
