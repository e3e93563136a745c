/*
 * squared norm of every CSR row (float).
 */
void csr_row_norms_f32(int n, int nnz, int rowptr[n + 1], int col[nnz], float val[nnz], float r[n])
{
    for (int i = 0; i < n; i++)
        for (int j = rowptr[i]; j < rowptr[i + 1]; j++)
            r[i] += val[j] * val[j];
}
