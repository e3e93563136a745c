/* Rejected (indirect subscript): the gathered index is loaded from memory. */
void gather(int n, int idx[n], double src[n], double dst[n])
{
    for (int i = 0; i < n; i++)
        dst[i] = src[idx[i]];
}
